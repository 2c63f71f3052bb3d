import Testing

@testable import callapi

/// The phone prints peer-supplied text (reject reasons, errors) with control characters escaped.
@Suite struct PhoneOutputTests {
    @Test func aRejectReasonCannotForgeALineOrSendEscapeSequences() {
        let reason = "busy\u{1B}[2J\u{1B}]0;owned\u{07}\n[1002] call: connected"
        let line = PhoneOutput(user: 1001).line("call: rejected (\(reason))")
        #expect(line == "[1001] call: rejected (busy\\u{1B}[2J\\u{1B}]0;owned\\u{7}\\n[1002] call: connected)\n")
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(!line.unicodeScalars.contains { $0.value == 0x1B })
    }

    @Test func c1ControlsDeleteAndLineSeparatorsAreEscaped() {
        #expect(TerminalText.escaped("a\u{9B}31mb\u{7F}c\u{2028}d\re\tf") == "a\\u{9B}31mb\\u{7F}c\\u{2028}d\\re\\tf")
    }

    @Test func ordinaryTextIsPrintedAsIs() {
        #expect(TerminalText.escaped("call: connected with 1002 — “ok” 👋") == "call: connected with 1002 — “ok” 👋")
    }
}
