/// Why bytes are not a valid MQTT 3.1.1 packet (for the subset ``MQTTCodec`` knows).
enum MQTTCodecError: Error, Equatable, Sendable {
    /// The remaining-length varint ran past four bytes.
    case malformedRemainingLength
    /// A length is above the 268,435,455 bytes MQTT can express.
    case tooLong(Int)
    /// The packet type (high nibble of the first byte) is not one this codec decodes.
    case unsupportedType(UInt8)
    /// The fixed header's flags are not the ones the spec requires for this type.
    case badFlags(UInt8)
    /// The packet is shorter than its contents need, or longer.
    case badLength
    /// A string field is not UTF-8.
    case badString
    /// A CONNECT with a will message, which this codec does not handle.
    case unsupportedWill
    /// QoS 3, or a QoS this codec does not handle.
    case badQoS(UInt8)
}
