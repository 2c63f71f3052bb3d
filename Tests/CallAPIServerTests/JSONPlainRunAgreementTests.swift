import CallAPITesting
import CallAPIWire
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore
@testable import CallAPISignalProtocol

/// The eight-bytes-at-a-time scan for bytes JSON must escape (CallAPIWire) agrees with a byte-by-byte scan on random
/// bytes, and the writer, the outbox's cost and the reader built on it agree with Foundation's JSON at every length
/// and position. (The scan's own edge cases: CallAPIWireTests.)
@Suite struct JSONPlainRunAgreementTests {
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

    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func theRunStopsWhereAByteByByteScanStopsInRandomBytes(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        // Mostly plain text with a few edge bytes, so that long runs and every stop both occur.
        let bytes = (0..<Int.random(in: 0..<300, using: &random)).map { _ -> UInt8 in
            Int.random(in: 0..<12, using: &random) == 0
                ? Self.edgeBytes.randomElement(using: &random)! : UInt8.random(in: 0x20...0xFF, using: &random)
        }
        let wrong = (0...bytes.count).filter { Self.plainRun(bytes, from: $0) != Self.byteByByte(bytes, from: $0) }
        #expect(wrong.isEmpty, "seed \(seed): \(bytes.count) bytes, wrong from \(wrong.prefix(5))")
    }

    /// Strings of 0 to 25 characters with one character that needs escaping (or a neighbour of one, or a
    /// multi-byte character) at every position: written as JSONEncoder writes them, counted by the outbox as
    /// written, and read back unchanged.
    @Test func stringsAreWrittenCountedAndReadBackAtEveryLengthAndPosition() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", " ", "!", "#", "[", "]", "\u{7F}", "é", "😀"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        var failures: [String] = []
        for special in specials {
            for length in 0..<26 {
                for position in 0...length {
                    var characters = [Character](repeating: "x", count: length)
                    if position < length { characters[position] = special }
                    let text = String(characters)
                    var written: [UInt8] = []
                    written.writeQuoted(text)
                    let expected = Array(try encoder.encode(text))
                    if written != expected { failures.append("written \(text.debugDescription)") }
                    if FrameCost.json(text) != written.count - 2 { failures.append("counted \(text.debugDescription)") }
                    let object = FlatJSONObject("{\"k\":" + String(decoding: written, as: UTF8.self) + "}")
                    if object?.string("k") != text { failures.append("read \(text.debugDescription)") }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first \(failures.prefix(5))")
    }
}
