import Foundation

/// Why the MQTT signal client could not log in, subscribe or publish.
public enum MQTTClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The broker refused the connection (CONNACK return code, spec 3.2.2.3: 4 bad user name or password,
    /// 5 not authorised).
    case refused(returnCode: UInt8)
    /// The broker refused the subscription to the user's own topic (SUBACK 0x80; an ACL that forbids it).
    case subscriptionRefused
    /// The broker did not answer in time.
    case timedOut(String)
    /// The connection closed; the client reconnects by itself while logged in.
    case connectionClosed
    /// Not logged in, or between a lost connection and the reconnect: the send was not attempted.
    case notConnected
    /// `login` was called while logged in.
    case alreadyLoggedIn
    /// 65,535 publishes await their PUBACK: no packet id is free.
    case tooManyInFlight
    /// The address is not `mqtt://host[:port]`.
    case badURL(String)

    public var description: String {
        switch self {
        case .refused(let code): "the MQTT broker refused the connection (CONNACK return code \(code))"
        case .subscriptionRefused: "the MQTT broker refused the subscription to the user's topic (check its ACL)"
        case .timedOut(let what): "the MQTT broker did not answer \(what) in time"
        case .connectionClosed: "the MQTT connection closed"
        case .notConnected: "the MQTT client is not connected (logged out, or reconnecting)"
        case .alreadyLoggedIn: "the MQTT client is already logged in; log out first"
        case .tooManyInFlight: "65,535 publishes await their PUBACK"
        case .badURL(let text): "\(text): expected mqtt://host[:port]"
        }
    }
}

/// Each case's fixed number: the code CallAPI reports with `onCallError(.sendMessageFail, .message, code, …)`
/// (docs/adapters.md, "Errors").
extension MQTTClientError: CustomNSError {
    public static var errorDomain: String { "CallAPIMQTT" }

    public var errorCode: Int {
        switch self {
        case .refused: 1
        case .subscriptionRefused: 2
        case .timedOut: 3
        case .connectionClosed: 4
        case .notConnected: 5
        case .alreadyLoggedIn: 6
        case .tooManyInFlight: 7
        case .badURL: 8
        }
    }

    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
}
