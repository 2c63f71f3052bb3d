/// Writes one JSON object into a ``JSONOutput``, without Foundation: members in the order given (callers give them
/// sorted, as `JSONEncoder`'s `.sortedKeys` does), strings escaped as `JSONEncoder` escapes them
/// (``JSONStringEscapes``), so the text is byte for byte what the general encoder writes. The frame coding writes
/// frames with it, the call message its text, the server its busy answer.
///
/// Inlinable, so that it is specialized for its output in the module that writes: frames are written on the hot
/// path, member by member.
@usableFromInline
package struct JSONObjectWriter<Output: JSONOutput> {
    @usableFromInline var output: Output
    @usableFromInline var empty = true

    /// Opens the object in `output`.
    @inlinable
    package init(into output: consuming Output) {
        self.output = output
        self.output.writeByte(UInt8(ascii: "{"))
    }

    /// Closes the object and gives the output back.
    @inlinable
    package consuming func finish() -> Output {
        output.writeByte(UInt8(ascii: "}"))
        return output
    }

    @inlinable
    package mutating func member(_ key: StaticString, _ value: String) {
        open(key)
        output.writeQuoted(value)
    }

    @inlinable
    package mutating func member(_ key: StaticString, _ value: String?) {
        if let value { member(key, value) }
    }

    @inlinable
    package mutating func member(_ key: StaticString, _ value: Int64) {
        open(key)
        output.writeInteger(value)
    }

    @inlinable
    package mutating func member(_ key: StaticString, _ value: Int) {
        member(key, Int64(value))
    }

    @inlinable
    package mutating func member(_ key: StaticString, _ value: Int?) {
        if let value { member(key, value) }
    }

    @inlinable
    package mutating func member(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        open(key)
        output.writeLiteral(value ? "true" : "false")
    }

    /// A whole value, as compact JSON with sorted keys.
    @inlinable
    package mutating func member(_ key: StaticString, _ value: JSONValue) {
        open(key)
        output.writeValue(value)
    }

    /// A member whose value `write` writes into the output itself (text kept escaped already, say).
    @inlinable
    package mutating func member(_ key: StaticString, writing write: (inout Output) -> Void) {
        open(key)
        write(&output)
    }

    /// A nested object, its members written by `members`.
    @inlinable
    package mutating func member(_ key: StaticString, object members: (inout Self) -> Void) {
        open(key)
        output.writeByte(UInt8(ascii: "{"))
        empty = true
        members(&self)
        output.writeByte(UInt8(ascii: "}"))
        empty = false
    }

    @inlinable
    mutating func open(_ key: StaticString) {
        if !empty { output.writeByte(UInt8(ascii: ",")) }
        empty = false
        output.writeByte(UInt8(ascii: "\""))
        output.writeLiteral(key)
        output.writeByte(UInt8(ascii: "\""))
        output.writeByte(UInt8(ascii: ":"))
    }
}
