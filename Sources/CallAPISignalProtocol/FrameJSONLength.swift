/// A ``FrameJSONOutput`` that only counts: the length of the text a frame's members make, to make room for it.
package struct FrameJSONLength: FrameJSONOutput {
    package private(set) var count = 0

    package init() {}

    package mutating func writeByte(_ byte: UInt8) {
        count &+= 1
    }

    package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        count &+= bytes.count
    }

    package mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        count &+= utf8.count &+ JSONStringEscapes.addedLength(utf8)
    }

    package mutating func writeInteger(_ value: Int64) {
        count &+= Self.decimalLength(value)
    }

    /// The characters of `value` in decimal, its sign included.
    package static func decimalLength(_ value: Int64) -> Int {
        var digits = value < 0 ? 2 : 1
        var rest = value.magnitude
        while rest >= 10 {
            rest /= 10
            digits &+= 1
        }
        return digits
    }
}
