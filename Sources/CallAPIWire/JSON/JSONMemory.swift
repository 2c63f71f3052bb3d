/// A ``JSONOutput`` writing into memory the caller lends for as long as it writes (a socket buffer's room,
/// an array's uninitialised capacity): the length a ``JSONLength`` counted, or at least the bound a
/// ``JSONLengthBound`` counted (``written`` then says where the text ends).
///
/// Writing past the memory's end stops the program (a precondition, checked once per write rather than once per
/// byte): it would mean the count and the writing disagree.
@usableFromInline
package struct JSONMemory: JSONOutput {
    @usableFromInline let memory: UnsafeMutableRawBufferPointer
    /// The bytes written so far, from the memory's start.
    @usableFromInline package var written: Int

    @inlinable
    package init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
        written = 0
    }

    @inlinable
    package mutating func writeByte(_ byte: UInt8) {
        let at = room(for: 1)
        at.storeBytes(of: byte, as: UInt8.self)
        written &+= 1
    }

    @inlinable
    package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        room(for: bytes.count).copyMemory(from: source, byteCount: bytes.count)
        written &+= bytes.count
    }

    /// Plain runs are copied whole (``JSONPlainRun``); each byte between them gets its escape.
    @usableFromInline
    package mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let source = utf8.baseAddress else { return }
        var index = 0
        while index < utf8.count {
            let run = JSONPlainRun.length(in: utf8, from: index)
            if run > 0 {
                room(for: run).copyMemory(from: source + index, byteCount: run)
                written &+= run
                index &+= run
            }
            guard index < utf8.count else { break }
            let byte = utf8[index]
            index &+= 1
            if let letter = JSONStringEscapes.shortEscape(byte) {
                let at = room(for: 2)
                at.storeBytes(of: UInt8(ascii: "\\"), as: UInt8.self)
                at.storeBytes(of: letter, toByteOffset: 1, as: UInt8.self)
                written &+= 2
            } else {
                let at = room(for: 6)
                at.storeBytes(of: UInt8(ascii: "\\"), as: UInt8.self)
                at.storeBytes(of: UInt8(ascii: "u"), toByteOffset: 1, as: UInt8.self)
                at.storeBytes(of: UInt8(ascii: "0"), toByteOffset: 2, as: UInt8.self)
                at.storeBytes(of: UInt8(ascii: "0"), toByteOffset: 3, as: UInt8.self)
                at.storeBytes(of: JSONStringEscapes.hexDigit(byte >> 4), toByteOffset: 4, as: UInt8.self)
                at.storeBytes(of: JSONStringEscapes.hexDigit(byte & 0x0F), toByteOffset: 5, as: UInt8.self)
                written &+= 6
            }
        }
    }

    /// Digits from the last: the length is known first.
    @usableFromInline
    package mutating func writeInteger(_ value: Int64) {
        let length = JSONLength.decimalLength(value)
        let at = room(for: length)
        if value < 0 { at.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self) }
        var magnitude = value.magnitude
        var offset = length &- 1
        repeat {
            at.storeBytes(of: UInt8(ascii: "0") &+ UInt8(magnitude % 10), toByteOffset: offset, as: UInt8.self)
            magnitude /= 10
            offset &-= 1
        } while magnitude > 0
        written &+= length
    }

    /// Where the next `count` bytes (at least one) go, once they are known to fit.
    @inlinable
    func room(for count: Int) -> UnsafeMutableRawPointer {
        precondition(count <= memory.count &- written, "a frame's text is longer than the memory made for it")
        // Not nil: at least one byte fits.
        return memory.baseAddress.unsafelyUnwrapped + written
    }
}
