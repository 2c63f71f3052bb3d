import Testing

@testable import CallAPIMQTT

/// The MQTT adapter's 3.1.1 codec against the byte examples of the OASIS specification.
@Suite("MQTT 3.1.1 codec")
struct MQTTCodecTests {
    /// Spec 2.2.3, table 2.4: the bounds of each remaining-length size.
    @Test(
        arguments: [
            (0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]),
            (2_097_151, [0xFF, 0xFF, 0x7F]), (2_097_152, [0x80, 0x80, 0x80, 0x01]),
            (268_435_455, [0xFF, 0xFF, 0xFF, 0x7F]),
        ] as [(Int, [UInt8])])
    func remainingLength(length: Int, bytes: [UInt8]) throws {
        #expect(MQTTCodec.encodeRemainingLength(length) == bytes)
        let decoded = try #require(try MQTTCodec.decodeRemainingLength(bytes))
        #expect(decoded.length == length)
        #expect(decoded.size == bytes.count)
    }

    @Test func remainingLengthPastFourBytesIsMalformed() throws {
        #expect(throws: MQTTCodecError.malformedRemainingLength) {
            try MQTTCodec.decodeRemainingLength([0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        }
        #expect(try MQTTCodec.decodeRemainingLength([0x80, 0x80]) == nil)
    }

    /// Spec 3.1.2.10, figure 3.6 (the variable header: "MQTT", level 4, then flags and keep alive 10), here
    /// with only the clean-session flag, then the client id.
    @Test func connect() throws {
        let connect = MQTTConnect(clientId: "ab", keepAliveSeconds: 10, cleanSession: true)
        let bytes = MQTTCodec.encode(.connect(connect))
        #expect(
            bytes == [0x10, 14, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x0A, 0x00, 0x02, 0x61, 0x62])
        #expect(try MQTTCodec.decode(bytes) == .connect(connect))
    }

    /// Spec 3.1.2.8–9 and 3.1.3.4–5: user name (flag 0x80) and password (0x40) follow the client id, each
    /// length-prefixed; a password without a user name is never sent.
    @Test func connectWithCredentials() throws {
        let connect = MQTTConnect(clientId: "c", keepAliveSeconds: 0, username: "u", password: "p")
        let bytes = MQTTCodec.encode(.connect(connect))
        #expect(
            bytes == [0x10, 19, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0xC2, 0x00, 0x00] + [
                0, 1, 0x63, 0, 1, 0x75, 0, 1, 0x70,
            ])
        #expect(try MQTTCodec.decode(bytes) == .connect(connect))
        let orphan = MQTTCodec.encode(.connect(MQTTConnect(clientId: "c", keepAliveSeconds: 0, password: "p")))
        #expect(try MQTTCodec.decode(orphan) == .connect(MQTTConnect(clientId: "c", keepAliveSeconds: 0)))
    }

    /// Spec 3.2: CONNACK is 0x20 0x02, then the session-present flag and the return code.
    @Test func connack() throws {
        #expect(try MQTTCodec.decode([0x20, 0x02, 0x00, 0x00]) == .connack(sessionPresent: false, returnCode: 0))
        #expect(try MQTTCodec.decode([0x20, 0x02, 0x01, 0x05]) == .connack(sessionPresent: true, returnCode: 5))
        #expect(MQTTCodec.encode(.connack(sessionPresent: false, returnCode: 0)) == [0x20, 0x02, 0x00, 0x00])
    }

    /// Spec 3.3.2.3, figure 3.11: topic "a/b", packet identifier 10; QoS 1 sets bit 1 of the first byte.
    @Test func publishQoS1() throws {
        let publish = MQTTPublish(topic: "a/b", payload: Array("hi".utf8), qos: 1, packetId: 10)
        let bytes = MQTTCodec.encode(.publish(publish))
        #expect(bytes == [0x32, 9, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x00, 0x0A, 0x68, 0x69])
        #expect(try MQTTCodec.decode(bytes) == .publish(publish))
    }

    @Test func publishQoS0HasNoPacketIdAndKeepsFlags() throws {
        let bytes: [UInt8] = [0x39, 5, 0x00, 0x01, 0x74, 0x01, 0x02]
        #expect(
            try MQTTCodec.decode(bytes)
                == .publish(
                    MQTTPublish(topic: "t", payload: [1, 2], qos: 0, packetId: nil, duplicate: true, retain: true)))
        #expect(throws: MQTTCodecError.badQoS(3)) { try MQTTCodec.decode([0x36, 3, 0x00, 0x01, 0x74]) }
    }

    /// Spec 3.4: PUBACK is 0x40 0x02 and the packet identifier.
    @Test func puback() throws {
        #expect(MQTTCodec.encode(.puback(packetId: 0x1234)) == [0x40, 0x02, 0x12, 0x34])
        #expect(try MQTTCodec.decode([0x40, 0x02, 0x12, 0x34]) == .puback(packetId: 0x1234))
    }

    /// Spec 3.8.3.1, figure 3.23: packet identifier 10, "a/b" at QoS 1 and "c/d" at QoS 2; the fixed header is
    /// 0x82 (reserved flags 0010).
    @Test func subscribe() throws {
        let packet = MQTTPacket.subscribe(
            packetId: 10, subscriptions: [.init(topicFilter: "a/b", qos: 1), .init(topicFilter: "c/d", qos: 2)])
        let bytes = MQTTCodec.encode(packet)
        #expect(
            bytes == [0x82, 14, 0x00, 0x0A, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x01, 0x00, 0x03, 0x63, 0x2F, 0x64, 0x02])
        #expect(try MQTTCodec.decode(bytes) == packet)
        #expect(throws: MQTTCodecError.badFlags(0)) { try MQTTCodec.decode([0x80] + Array(bytes.dropFirst())) }
    }

    /// Spec 3.9.3, figure 3.26: return codes "success, QoS 0", "success, QoS 2" and "failure".
    @Test func suback() throws {
        let bytes: [UInt8] = [0x90, 5, 0x00, 0x0A, 0x00, 0x02, 0x80]
        #expect(try MQTTCodec.decode(bytes) == .suback(packetId: 10, returnCodes: [0x00, 0x02, 0x80]))
        #expect(MQTTCodec.encode(.suback(packetId: 10, returnCodes: [0x00, 0x02, 0x80])) == bytes)
    }

    /// Spec 3.12–3.14: PINGREQ, PINGRESP and DISCONNECT are two bytes each.
    @Test func twoBytePackets() throws {
        #expect(MQTTCodec.encode(.pingreq) == [0xC0, 0x00])
        #expect(MQTTCodec.encode(.pingresp) == [0xD0, 0x00])
        #expect(MQTTCodec.encode(.disconnect) == [0xE0, 0x00])
        #expect(try MQTTCodec.decode([0xD0, 0x00]) == .pingresp)
        #expect(try MQTTCodec.decode([0xC0, 0x00]) == .pingreq)
        #expect(try MQTTCodec.decode([0xE0, 0x00]) == .disconnect)
    }

    @Test func framesAreCutAtTheirLength() throws {
        let publish = MQTTCodec.encode(
            .publish(
                MQTTPublish(topic: "callapi/u/7", payload: Array(repeating: 0x78, count: 300), qos: 1, packetId: 1)))
        #expect(publish[1] & 0x80 != 0)  // a two-byte remaining length
        #expect(try MQTTCodec.frameSize(publish.prefix(1)) == nil)
        #expect(try MQTTCodec.frameSize(publish.prefix(5)) == publish.count)
        #expect(throws: MQTTCodecError.badLength) { try MQTTCodec.decode(Array(publish.dropLast())) }
        #expect(throws: MQTTCodecError.unsupportedType(15)) { try MQTTCodec.decode([0xF0, 0x00]) }
    }
}
