/// Writes one flat JSON object as ``FrameCoding`` sends frames, without Foundation, into an ``FrameJSONOutput``:
/// members in the order given (callers give them sorted, as `JSONEncoder`'s `.sortedKeys` does), strings escaped
/// as `JSONEncoder` escapes them (``JSONStringEscapes``), so the text is byte for byte what the general encoder
/// writes.
package struct FrameJSONWriter<Output: FrameJSONOutput> {
    private var output: Output
    private var empty = true

    /// Opens the object in `output`.
    package init(into output: consuming Output) {
        self.output = output
        self.output.writeByte(UInt8(ascii: "{"))
    }

    /// Closes the object and gives the output back.
    package consuming func finish() -> Output {
        output.writeByte(UInt8(ascii: "}"))
        return output
    }

    package mutating func member(_ key: StaticString, _ value: String) {
        open(key)
        output.writeQuoted(value)
    }

    /// A message body: escaped as a string is, or copied when it is kept escaped already.
    package mutating func member(_ key: StaticString, _ value: MessageBody) {
        open(key)
        value.writeQuoted(to: &output)
    }

    package mutating func member(_ key: StaticString, _ value: String?) {
        if let value { member(key, value) }
    }

    package mutating func member(_ key: StaticString, _ value: Int64) {
        open(key)
        output.writeInteger(value)
    }

    package mutating func member(_ key: StaticString, _ value: Int) {
        member(key, Int64(value))
    }

    package mutating func member(_ key: StaticString, _ value: Int?) {
        if let value { member(key, value) }
    }

    package mutating func member(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        open(key)
        write(value ? "true" : "false")
    }

    /// A nested object, its members written by `members`.
    package mutating func member(_ key: StaticString, object members: (inout Self) -> Void) {
        open(key)
        output.writeByte(UInt8(ascii: "{"))
        empty = true
        members(&self)
        output.writeByte(UInt8(ascii: "}"))
        empty = false
    }

    private mutating func open(_ key: StaticString) {
        if !empty { output.writeByte(UInt8(ascii: ",")) }
        empty = false
        output.writeByte(UInt8(ascii: "\""))
        write(key)
        output.writeByte(UInt8(ascii: "\""))
        output.writeByte(UInt8(ascii: ":"))
    }

    private mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { output.writeBytes(UnsafeRawBufferPointer($0)) }
    }
}
