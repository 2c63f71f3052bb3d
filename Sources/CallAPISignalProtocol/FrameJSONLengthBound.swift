/// A ``FrameJSONOutput`` that counts the most a frame's text can take, without reading its strings: every string
/// byte is counted as six (the longest escape, `\u00xx`) and every integer as twenty characters (`Int64.min`).
///
/// The server makes room this long in a socket's buffer and writes the frame there once: counting the exact
/// length first (``FrameJSONLength``) scanned every string twice, ~1,500 instructions per relayed message
/// (callgrind, docs/benchmarks.md).
package struct FrameJSONLengthBound: FrameJSONOutput {
    package private(set) var count = 0

    package init() {}

    /// The most characters an integer takes in decimal.
    static let integerCharacters = 20

    package mutating func writeByte(_ byte: UInt8) {
        count &+= 1
    }

    package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        count &+= bytes.count
    }

    package mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        count &+= utf8.count &* 6
    }

    package mutating func writeInteger(_ value: Int64) {
        count &+= Self.integerCharacters
    }
}
