import Testing

@testable import CallAPI

/// The sender ids a signaling channel vouches for: read in one pass, they are accepted exactly as the rule says.
@Suite("User ids from the channel")
struct UserIDTests {
    /// The rule, written plainly: ASCII digits, no leading zero but in "0", at most 19 of them, at most `maximum`.
    static func reference(_ text: String) -> UInt? {
        let digits = text.utf8
        guard let first = digits.first, !(first == UInt8(ascii: "0") && digits.count > 1),
            digits.count <= 19, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        guard let id = UInt(text), id <= UserID.maximum else { return nil }
        return id
    }

    static let texts = [
        "", "0", "00", "01", "1", "10", "100", "1001", "01001", "+1001", "-1", " 1", "1 ", "1a", "a1", "١", "1.0",
        "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
        "1000000000000000000", "9999999999999999999", "10000000000000000000", "0000000000000000001",
        String(repeating: "9", count: 40),
    ]

    @Test("the one-pass reading accepts and reads exactly what the rule does", arguments: texts)
    func readsAsTheRuleSays(text: String) {
        #expect(UserID.canonical(text) == Self.reference(text))
    }

    @Test("every short text of digits and a few other bytes is read as the rule reads it")
    func shortTextsAgree() {
        let alphabet = ["0", "1", "9", "+", " ", "a"]
        var texts = [""]
        for _ in 0..<4 { texts += texts.flatMap { text in alphabet.map { text + $0 } } }
        for text in Set(texts) {
            #expect(UserID.canonical(text) == Self.reference(text), "\(text)")
        }
    }
}
