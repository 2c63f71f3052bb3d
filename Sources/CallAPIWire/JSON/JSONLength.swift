/// A ``JSONOutput`` that only counts: the length of the text a frame's members make, to make room for it.
@usableFromInline
package struct JSONLength: JSONOutput {
    @usableFromInline package var count: Int

    @inlinable
    package init() { count = 0 }

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
        count &+= utf8.count &+ JSONStringEscapes.addedLength(utf8)
    }

    @inlinable
    package mutating func writeInteger(_ value: Int64) {
        count &+= Self.decimalLength(value)
    }

    /// The characters of `value` in decimal, its sign included.
    @usableFromInline
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
