/// Why the bench's MQTT client could not connect, subscribe or publish.
enum MQTTClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The broker refused the connection (CONNACK return code, spec 3.2.2.3).
    case refused(returnCode: UInt8)
    /// The broker refused the subscription (SUBACK 0x80).
    case subscriptionRefused
    /// The broker did not answer in time.
    case timedOut(String)
    case connectionClosed
    /// 65,535 publishes await their PUBACK: no packet id is free.
    case tooManyInFlight

    var description: String {
        switch self {
        case .refused(let code): "the MQTT broker refused the connection (CONNACK return code \(code))"
        case .subscriptionRefused: "the MQTT broker refused the subscription"
        case .timedOut(let what): "the MQTT broker did not answer \(what) in time"
        case .connectionClosed: "the MQTT connection closed"
        case .tooManyInFlight: "65,535 publishes await their PUBACK"
        }
    }
}
