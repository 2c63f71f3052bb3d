/// A byte array as a ``JSONOutput``: text written once, appended to whatever the array holds. What needs
/// working out (escapes, digits) is counted first and written into the room made for it.
extension Array: JSONOutput where Element == UInt8 {
    @usableFromInline
    package mutating func writeByte(_ byte: UInt8) {
        append(byte)
    }

    @usableFromInline
    package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes)
    }

    @usableFromInline
    package mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        writeIntoRoom(utf8.count &+ JSONStringEscapes.addedLength(utf8)) { $0.writeEscaped(utf8) }
    }

    @usableFromInline
    package mutating func writeInteger(_ value: Int64) {
        writeIntoRoom(JSONLength.decimalLength(value)) { $0.writeInteger(value) }
    }

    private mutating func writeIntoRoom(_ length: Int, _ write: (inout JSONMemory) -> Void) {
        let start = count
        append(contentsOf: repeatElement(0, count: length))
        withUnsafeMutableBytes { bytes in
            var memory = JSONMemory(UnsafeMutableRawBufferPointer(rebasing: bytes[start...]))
            write(&memory)
            precondition(memory.written == length, "text written at another length than counted")
        }
    }
}
