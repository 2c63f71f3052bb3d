import CallAPIWire
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore
@testable import CallAPISignalProtocol

/// The writer, the outbox's cost and the reader built on CallAPIWire's eight-bytes-at-a-time scan agree with
/// Foundation's JSON at every length and position. (The scan itself against a byte-by-byte scan: CallAPIWireTests.)
@Suite struct JSONPlainRunAgreementTests {
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
