/// Text from peers and servers made safe to print on a terminal.
///
/// A peer chooses a call's reject reason, extension fields and user ids; printed raw, an escape sequence in them
/// could move the cursor, recolour or retitle the terminal, and a newline could forge a line of the phone's own
/// output (`[1002] call: connected`). Every control character (C0, DEL, C1) and the Unicode line and paragraph
/// separators are shown as a visible escape instead.
enum TerminalText {
    /// `text` with each control character written as `\n`, `\t`, `\r` or `\u{1B}`.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where needsEscape(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }
}
