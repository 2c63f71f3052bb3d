/// A ``JSONOutput`` that counts the most a frame's text can take, without reading its strings: every string
/// byte is counted as six (the longest escape, `\u00xx`) and every integer as twenty characters (`Int64.min`).
///
/// The server makes room this long in a socket's buffer and writes the frame there once: counting the exact
/// length first (``JSONLength``) scanned every string twice, ~1,500 instructions per relayed message
/// (callgrind, docs/benchmarks.md).
@usableFromInline
package struct JSONLengthBound: JSONOutput {
    @usableFromInline package var count: Int

    @inlinable
    package init() { count = 0 }

    /// The most characters an integer takes in decimal.
    @usableFromInline static let integerCharacters = 20

    @inlinable
    package mutating func writeByte(_ byte: UInt8) {
        count &+= 1
    }

    @inlinable
    package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        count &+= bytes.count
    }

    @inlinable
    package mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        count &+= utf8.count &* 6
    }

    @inlinable
    package mutating func writeInteger(_ value: Int64) {
        count &+= Self.integerCharacters
    }
}
