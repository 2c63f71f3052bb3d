import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The outbox limits count a string as the bytes JSON writes for it, escapes included.
@Suite struct FrameCostTests {
    @Test(arguments: FrameFastPathTests.tricky + [String(repeating: "\u{01}\"", count: 300)])
    func aStringCostsWhatJSONWritesForIt(_ text: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let written = try encoder.encode(text).count - 2  // without the quotes
        #expect(FrameCost.json(text) == written)
    }
}
