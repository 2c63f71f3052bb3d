import CallAPIWire

/// The body of a `send` or a `message`, in one of two forms: text (as an app or a decoder built it), or the
/// escaped bytes between a JSON string's quotes, as a client sent them.
///
/// The second form is why this exists: the server reads a `send`'s body as escaped bytes (checked as a JSON string
/// is checked, never unescaped) and writes them into the `message` as they are, so a relayed body is never decoded
/// and escaped again. Its text is built only when something asks for it (the call ledger, for call messages).
///
/// A relayed body keeps the sender's escapes: a client that wrote `\u0041` or `\/` has them relayed as written,
/// which every JSON reader decodes to the same text. Two bodies are equal when their texts are.
package struct MessageBody: Sendable {
    private enum Form: Sendable {
        case text(String)
        /// Valid JSON string contents: no raw quote, backslash or control, every escape complete, valid UTF-8.
        case escaped([UInt8])
    }

    private let form: Form

    package init(_ text: String) {
        form = .text(text)
    }

    /// `escaped`: bytes that a JSON reader has checked are a string's contents (see ``Form/escaped(_:)``).
    package init(checkedEscaped escaped: [UInt8]) {
        form = .escaped(escaped)
    }

    /// The text (unescaped, when the body is kept escaped).
    package var text: String {
        switch form {
        case .text(let text): text
        case .escaped(let escaped): FlatJSONObject.unescape(checkedContents: escaped)
        }
    }

    /// The length of the body as JSON string contents, escapes included: what it takes in a frame.
    package var escapedCount: Int {
        switch form {
        case .text(let text): JSONStringEscapes.escapedLength(of: text)
        case .escaped(let escaped): escaped.count
        }
    }

    /// Whether the text may start with `{` (a JSON object): cheap, and never false for one that does.
    package var mayBeObject: Bool {
        switch form {
        case .text(let text): text.utf8.first == UInt8(ascii: "{")
        case .escaped(let escaped): escaped.first == UInt8(ascii: "{") || escaped.first == UInt8(ascii: "\\")
        }
    }

    /// Writes the body quoted: escaped as ``JSONStringEscapes`` escapes text, or copied when already escaped.
    package func writeQuoted(to output: inout some JSONOutput) {
        switch form {
        case .text(let text):
            output.writeQuoted(text)
        case .escaped(let escaped):
            output.writeByte(UInt8(ascii: "\""))
            escaped.withUnsafeBytes { output.writeBytes($0) }
            output.writeByte(UInt8(ascii: "\""))
        }
    }
}

extension MessageBody: Equatable {
    package static func == (lhs: MessageBody, rhs: MessageBody) -> Bool {
        switch (lhs.form, rhs.form) {
        case (.text(let a), .text(let b)): a == b
        case (.escaped(let a), .escaped(let b)) where a == b: true
        default: lhs.text == rhs.text
        }
    }
}

/// Coded as the JSON string it is, by the general (Foundation) coders.
extension MessageBody: Codable {
    package init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

extension JSONObjectWriter {
    /// A message body: escaped as a string is, or copied when it is kept escaped already.
    package mutating func member(_ key: StaticString, _ value: MessageBody) {
        member(key) { value.writeQuoted(to: &$0) }
    }
}
