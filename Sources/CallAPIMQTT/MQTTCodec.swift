import Foundation

/// Encodes and decodes MQTT 3.1.1 packets as bytes (OASIS standard, 29 October 2014). Pure: no I/O.
///
/// A packet is a fixed header (type and flags in one byte, then the remaining length as a varint of 1–4 bytes,
/// 7 bits each, low group first, high bit = more) followed by `remaining length` bytes.
enum MQTTCodec {
    static let maxRemainingLength = 268_435_455

    // MARK: - Encoding

    static func encode(_ packet: MQTTPacket) -> [UInt8] {
        var body: [UInt8] = []
        let first: UInt8
        switch packet {
        case .connect(let connect):
            first = 0x10
            appendString("MQTT", to: &body)
            body.append(4)  // protocol level 3.1.1
            // Spec 3.1.2.8–9: a password is only allowed with a user name.
            let password = connect.username == nil ? nil : connect.password
            body.append(
                (connect.cleanSession ? 0x02 : 0x00) | (connect.username != nil ? 0x80 : 0)
                    | (password != nil ? 0x40 : 0))
            appendUInt16(connect.keepAliveSeconds, to: &body)
            appendString(connect.clientId, to: &body)
            if let username = connect.username { appendString(username, to: &body) }
            if let password { appendString(password, to: &body) }
        case .connack(let sessionPresent, let returnCode):
            first = 0x20
            body = [sessionPresent ? 1 : 0, returnCode]
        case .publish(let publish):
            first = 0x30 | (publish.duplicate ? 0x08 : 0) | (publish.qos << 1) | (publish.retain ? 0x01 : 0)
            appendString(publish.topic, to: &body)
            if publish.qos > 0 { appendUInt16(publish.packetId ?? 0, to: &body) }
            body += publish.payload
        case .puback(let packetId):
            first = 0x40
            appendUInt16(packetId, to: &body)
        case .subscribe(let packetId, let subscriptions):
            first = 0x82
            appendUInt16(packetId, to: &body)
            for subscription in subscriptions {
                appendString(subscription.topicFilter, to: &body)
                body.append(subscription.qos)
            }
        case .suback(let packetId, let returnCodes):
            first = 0x90
            appendUInt16(packetId, to: &body)
            body += returnCodes
        case .pingreq: first = 0xC0
        case .pingresp: first = 0xD0
        case .disconnect: first = 0xE0
        }
        return [first] + encodeRemainingLength(body.count) + body
    }

    /// The remaining-length varint (spec 2.2.3). Lengths above ``maxRemainingLength`` are clamped by the caller.
    static func encodeRemainingLength(_ length: Int) -> [UInt8] {
        var value = length
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value % 128)
            value /= 128
            if value > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value > 0
        return bytes
    }

    private static func appendUInt16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        let utf8 = Array(text.utf8)
        appendUInt16(UInt16(min(utf8.count, 65_535)), to: &bytes)
        bytes += utf8.prefix(65_535)
    }

    // MARK: - Decoding

    /// The remaining length and the size of its varint, read from `bytes` (which start after the first byte);
    /// nil if more bytes are needed.
    static func decodeRemainingLength(_ bytes: some Collection<UInt8>) throws -> (length: Int, size: Int)? {
        var value = 0
        var multiplier = 1
        var size = 0
        for byte in bytes {
            size += 1
            value += Int(byte & 0x7F) * multiplier
            if byte & 0x80 == 0 { return (value, size) }
            guard size < 4 else { throw MQTTCodecError.malformedRemainingLength }
            multiplier *= 128
        }
        return nil
    }

    /// The size of the whole packet at the start of `bytes`, or nil if its fixed header is not complete yet.
    static func frameSize(_ bytes: some Collection<UInt8>) throws -> Int? {
        guard bytes.count >= 2 else { return nil }
        guard let (length, size) = try decodeRemainingLength(bytes.dropFirst()) else { return nil }
        return 1 + size + length
    }

    /// Decodes exactly one packet: `frame` must hold it whole and nothing else.
    static func decode(_ frame: [UInt8]) throws -> MQTTPacket {
        guard let total = try frameSize(frame) else { throw MQTTCodecError.badLength }
        guard total == frame.count else { throw MQTTCodecError.badLength }
        let first = frame[0]
        let flags = first & 0x0F
        let headerSize = total - (try decodeRemainingLength(frame.dropFirst())!.length)
        var reader = Reader(bytes: frame, position: headerSize)
        let packet: MQTTPacket
        switch first >> 4 {
        case 1:
            try expectFlags(flags, 0)
            guard try reader.string() == "MQTT", try reader.byte() == 4 else { throw MQTTCodecError.badLength }
            let connectFlags = try reader.byte()
            guard connectFlags & 0x04 == 0 else { throw MQTTCodecError.unsupportedWill }
            let keepAlive = try reader.uint16()
            let clientId = try reader.string()
            let username = connectFlags & 0x80 != 0 ? try reader.string() : nil
            let password = connectFlags & 0x40 != 0 ? try reader.string() : nil
            packet = .connect(
                MQTTConnect(
                    clientId: clientId, keepAliveSeconds: keepAlive, cleanSession: connectFlags & 0x02 != 0,
                    username: username, password: password))
        case 2:
            try expectFlags(flags, 0)
            let acknowledge = try reader.byte()
            packet = .connack(sessionPresent: acknowledge & 0x01 != 0, returnCode: try reader.byte())
        case 3:
            let qos = (flags >> 1) & 0x03
            guard qos < 3 else { throw MQTTCodecError.badQoS(qos) }
            let topic = try reader.string()
            let packetId = qos > 0 ? try reader.uint16() : nil
            let payload = Array(frame[reader.position...])
            reader.position = frame.count
            packet = .publish(
                MQTTPublish(
                    topic: topic, payload: payload, qos: qos, packetId: packetId, duplicate: flags & 0x08 != 0,
                    retain: flags & 0x01 != 0))
        case 4:
            try expectFlags(flags, 0)
            packet = .puback(packetId: try reader.uint16())
        case 8:
            try expectFlags(flags, 0x02)
            let packetId = try reader.uint16()
            var subscriptions: [MQTTSubscription] = []
            while reader.position < frame.count {
                let filter = try reader.string()
                subscriptions.append(MQTTSubscription(topicFilter: filter, qos: try reader.byte()))
            }
            packet = .subscribe(packetId: packetId, subscriptions: subscriptions)
        case 9:
            try expectFlags(flags, 0)
            let packetId = try reader.uint16()
            let codes = Array(frame[reader.position...])
            reader.position = frame.count
            packet = .suback(packetId: packetId, returnCodes: codes)
        case 12:
            try expectFlags(flags, 0)
            packet = .pingreq
        case 13:
            try expectFlags(flags, 0)
            packet = .pingresp
        case 14:
            try expectFlags(flags, 0)
            packet = .disconnect
        default:
            throw MQTTCodecError.unsupportedType(first >> 4)
        }
        guard reader.position == frame.count else { throw MQTTCodecError.badLength }
        return packet
    }

    private static func expectFlags(_ flags: UInt8, _ expected: UInt8) throws {
        guard flags == expected else { throw MQTTCodecError.badFlags(flags) }
    }

    /// Reads big-endian integers and length-prefixed strings from a frame.
    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        mutating func byte() throws -> UInt8 {
            guard position < bytes.count else { throw MQTTCodecError.badLength }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func uint16() throws -> UInt16 {
            let high = try byte()
            return UInt16(high) << 8 | UInt16(try byte())
        }

        mutating func string() throws -> String {
            let length = Int(try uint16())
            guard position + length <= bytes.count else { throw MQTTCodecError.badLength }
            defer { position += length }
            guard let text = String(bytes: bytes[position..<position + length], encoding: .utf8) else {
                throw MQTTCodecError.badString
            }
            return text
        }
    }
}
