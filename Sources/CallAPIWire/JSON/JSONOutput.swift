/// Where JSON text is written, as UTF-8 bytes: the one output of ``JSONObjectWriter`` and of ``JSONValue``'s text.
///
/// Text is written twice where its room must be made first: once into a ``JSONLength`` (the exact length) or a
/// ``JSONLengthBound`` (the most it can take, counted without reading its strings: a socket's buffer), then into a
/// ``JSONMemory`` that long (a `String`'s or a buffer's storage), so that it is neither grown piece by piece nor
/// copied (each append to a `String` cost ~340 instructions, about a third of the state machine bench's time per
/// call; docs/benchmarks.md). A byte array is an output too, for text written once.
@usableFromInline
package protocol JSONOutput {
    mutating func writeByte(_ byte: UInt8)
    mutating func writeBytes(_ bytes: UnsafeRawBufferPointer)
    /// `utf8` as a JSON string's contents, escaped (``JSONStringEscapes``), without the quotes.
    mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>)
    /// `value` in decimal, as `String(value)` writes it.
    mutating func writeInteger(_ value: Int64)
}

extension JSONOutput {
    /// `string` as a JSON string: quoted and escaped exactly as `JSONEncoder` with `.withoutEscapingSlashes`
    /// escapes it.
    @inlinable
    package mutating func writeQuoted(_ string: String) {
        writeByte(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { writeEscaped($0) }
        writeByte(UInt8(ascii: "\""))
    }

    /// Text that needs no escaping: punctuation, keys, `true`.
    @inlinable
    package mutating func writeLiteral(_ text: StaticString) {
        writeBytes(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` as compact JSON, object keys sorted (so equal values give equal text); a double that is not finite
    /// as `null`.
    @usableFromInline
    package mutating func writeValue(_ value: JSONValue) {
        switch value {
        case .null: writeLiteral("null")
        case .bool(let flag): writeLiteral(flag ? "true" : "false")
        case .int(let number): writeInteger(Int64(number))
        case .double(let number):
            if number.isFinite {
                var text = number.description
                text.withUTF8 { writeBytes(UnsafeRawBufferPointer($0)) }
            } else {
                writeLiteral("null")
            }
        case .string(let text): writeQuoted(text)
        case .array(let items):
            writeByte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { writeByte(UInt8(ascii: ",")) }
                writeValue(item)
            }
            writeByte(UInt8(ascii: "]"))
        case .object(let members):
            writeByte(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { writeByte(UInt8(ascii: ",")) }
                writeQuoted(key)
                writeByte(UInt8(ascii: ":"))
                writeValue(members[key].unsafelyUnwrapped)
            }
            writeByte(UInt8(ascii: "}"))
        }
    }
}
