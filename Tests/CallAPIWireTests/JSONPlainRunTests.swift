import Testing

@testable import CallAPIWire

/// The eight-bytes-at-a-time scan for bytes JSON must escape stops exactly where a byte-by-byte scan stops, and the
/// reader built on it refuses what it must.
@Suite struct JSONPlainRunTests {
    /// The bytes that must be escaped, their neighbours (which must not be) and bytes of multi-byte UTF-8.
    static let edgeBytes: [UInt8] = [
        0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xFF,
    ]

    static func byteByByte(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count, !(bytes[index] < 0x20 || bytes[index] == 0x22 || bytes[index] == 0x5C) {
            index += 1
        }
        return index - start
    }

    static func plainRun(_ bytes: [UInt8], from start: Int) -> Int {
        bytes.withUnsafeBufferPointer { JSONPlainRun.length(in: $0, from: start) }
    }

    @Test func theRunStopsWhereAByteByByteScanStopsForEveryEdgeByteAtEveryPosition() {
        var mismatches: [String] = []
        for filler: UInt8 in [UInt8(ascii: "a"), 0x20, 0x7F, 0xC3] {
            for edge in Self.edgeBytes {
                for length in 0..<26 {
                    for position in 0...length {
                        var bytes = [UInt8](repeating: filler, count: length)
                        if position < length { bytes[position] = edge }
                        for start in 0...length
                        where Self.plainRun(bytes, from: start) != Self.byteByByte(bytes, from: start) {
                            mismatches.append(
                                "filler \(filler) edge \(edge) length \(length) at \(position) from \(start)")
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// Two edge bytes in one word: a borrow out of the lower one can mark bytes above it, so where the run stops
    /// must come from the lowest mark only.
    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func theRunStopsWhereAByteByByteScanStopsInRandomBytes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        // Mostly plain text with a few edge bytes, so that long runs and every stop both occur.
        let bytes = (0..<Int.random(in: 0..<300, using: &random)).map { _ -> UInt8 in
            Int.random(in: 0..<12, using: &random) == 0
                ? Self.edgeBytes.randomElement(using: &random)! : UInt8.random(in: 0x20...0xFF, using: &random)
        }
        let wrong = (0...bytes.count).filter { Self.plainRun(bytes, from: $0) != Self.byteByByte(bytes, from: $0) }
        #expect(wrong.isEmpty, "seed \(seed): \(bytes.count) bytes, wrong from \(wrong.prefix(5))")
    }

    @Test func theRunStopsAtTheLowerOfTwoEdgeBytesInOneWord() {
        var mismatches: [String] = []
        for first in Self.edgeBytes {
            for second in Self.edgeBytes {
                for low in 0..<16 {
                    for high in (low + 1)..<17 {
                        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 17)
                        bytes[low] = first
                        bytes[high] = second
                        for start in [0, 1, low]
                        where Self.plainRun(bytes, from: start) != Self.byteByByte(bytes, from: start) {
                            mismatches.append("\(first) at \(low), \(second) at \(high), from \(start)")
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test func aRawControlCharacterAfterALongPlainRunIsRefusedByTheReader() {
        for length in [7, 8, 9, 15, 16, 17, 40] {
            let plain = String(repeating: "y", count: length)
            #expect(FlatJSONObject("{\"k\":\"\(plain)\u{01}\"}") == nil, "after \(length) plain bytes")
            #expect(FlatJSONObject("{\"k\":\"\\n\(plain)\u{01}\"}") == nil, "after an escape and \(length)")
            #expect(FlatJSONObject("{\"k\":\"\\n\(plain)\"}")?.string("k") == "\n" + plain)
        }
    }
}

/// A small seeded generator (SplitMix64), so that a failing seed can be run again.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
