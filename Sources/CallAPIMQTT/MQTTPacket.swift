/// The MQTT 3.1.1 control packets the client sends or receives (a subset: no QoS 2, no will).
enum MQTTPacket: Equatable, Sendable {
    case connect(MQTTConnect)
    case connack(sessionPresent: Bool, returnCode: UInt8)
    case publish(MQTTPublish)
    case puback(packetId: UInt16)
    case subscribe(packetId: UInt16, subscriptions: [MQTTSubscription])
    case suback(packetId: UInt16, returnCodes: [UInt8])
    case pingreq
    case pingresp
    case disconnect
}

/// A PUBLISH packet's contents. `packetId` is present exactly when `qos` is above 0.
struct MQTTPublish: Equatable, Sendable {
    var topic: String
    var payload: [UInt8]
    var qos: UInt8 = 0
    var packetId: UInt16?
    var duplicate = false
    var retain = false
}

/// One topic filter of a SUBSCRIBE packet and the maximum QoS asked for it.
struct MQTTSubscription: Equatable, Sendable {
    var topicFilter: String
    var qos: UInt8
}

/// A CONNECT packet's contents (spec 3.1). The password is text here: the client sends its token as one.
struct MQTTConnect: Equatable, Sendable {
    var clientId: String
    var keepAliveSeconds: UInt16
    var cleanSession = true
    var username: String?
    var password: String?
}
