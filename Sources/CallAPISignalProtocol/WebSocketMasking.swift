/// RFC 6455 §5.3 masking, both ways (it is its own inverse): a client masks what it sends, a server unmasks what it
/// reads. Inlinable, so that the server's read path and the client's frame writer, in other modules, do not pay a
/// call for it per frame.
package enum WebSocketMasking {
    /// XORs `source` with the four key bytes repeated (byte `i` with key byte `i % 4`) into `destination`, which is
    /// at least as long, eight bytes at a time. `key` holds the four bytes in memory order, as they are on the wire.
    @inlinable package static func apply(
        _ source: UnsafeRawBufferPointer, key: UInt32, into destination: UnsafeMutableRawBufferPointer
    ) {
        precondition(destination.count >= source.count, "the destination is shorter than the payload")
        // Two copies of the key hold its bytes twice in memory order, whatever the machine's byte order, so a word
        // of the payload lines up with it at every multiple of eight.
        let wideKey = UInt64(truncatingIfNeeded: key) | UInt64(truncatingIfNeeded: key) << 32
        var index = 0
        while index &+ 8 <= source.count {
            let word = source.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ wideKey
            destination.storeBytes(of: word, toByteOffset: index, as: UInt64.self)
            index &+= 8
        }
        withUnsafeBytes(of: key) { keyBytes in
            while index < source.count {
                destination[index] = source[index] ^ keyBytes[index & 3]
                index &+= 1
            }
        }
    }
}
