/// Where a ``FrameJSONWriter`` puts a frame's text.
///
/// A frame is written twice on the hot path: once into a ``FrameJSONLengthBound``, which counts the most the text
/// can take without reading its strings, and then into a ``FrameJSONMemory`` at least that long (a socket's
/// buffer, after room for the WebSocket header), so the text is neither grown piece by piece nor copied. Text
/// written into an array of its own length is counted exactly first (``FrameJSONLength``). A byte array is an
/// output too, for text written once.
package protocol FrameJSONOutput {
    mutating func writeByte(_ byte: UInt8)
    mutating func writeBytes(_ bytes: UnsafeRawBufferPointer)
    /// `utf8` as a JSON string's contents, escaped (``JSONStringEscapes``), without the quotes.
    mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>)
    /// `value` in decimal, as `String(value)` writes it.
    mutating func writeInteger(_ value: Int64)
}

extension FrameJSONOutput {
    /// `string` as a JSON string: quoted and escaped exactly as `JSONEncoder` with `.withoutEscapingSlashes`
    /// escapes it.
    package mutating func writeQuoted(_ string: String) {
        writeByte(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { writeEscaped($0) }
        writeByte(UInt8(ascii: "\""))
    }
}
