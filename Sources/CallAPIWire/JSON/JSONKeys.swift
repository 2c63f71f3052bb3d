import Foundation

/// The keys a reader picks out of a JSON object (``FlatJSONObject/pick(_:from:keepingEscaped:)``), each held with
/// its length and first eight bytes as one integer, so that a key read from the text is matched by comparing two
/// integers per candidate instead of calling `memcmp` for each key of its length. Made once (a `static let`).
@usableFromInline
package struct JSONKeys: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    /// A key as it is compared.
    @usableFromInline struct Entry: Sendable {
        let length: Int
        /// The first eight bytes (fewer for a shorter key, zero above them), little-endian.
        let head: UInt64
        @usableFromInline let name: StaticString
    }

    /// Inlinable with the collection's members: ``FlatJSONObject/withPicked(_:fromUTF8:keepingEscaped:_:)`` counts
    /// the keys in its caller's module.
    @usableFromInline let entries: [Entry]

    package init(_ names: [StaticString]) {
        precondition(names.count <= 64, "a reader picks at most 64 keys")
        entries = names.map { name in
            precondition(name.hasPointerRepresentation, "a key is a string literal")
            let length = name.utf8CodeUnitCount
            var head: UInt64 = 0
            for offset in 0..<Swift.min(length, 8) { head |= UInt64(name.utf8Start[offset]) << (offset * 8) }
            return Entry(length: length, head: head, name: name)
        }
    }

    @usableFromInline
    package init(arrayLiteral names: StaticString...) { self.init(names) }

    @inlinable package var startIndex: Int { 0 }
    @inlinable package var endIndex: Int { entries.count }
    @inlinable package subscript(position: Int) -> StaticString { entries[position].name }

    /// The index of the key spelled by `bytes[start..<end]`, which are followed by at least one more byte (the
    /// closing quote): nil when it is none of these keys.
    @inline(__always)
    func slot(of bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let length = end &- start
        var head: UInt64 = 0
        if start &+ 8 <= bytes.count {
            head = UInt64(littleEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            if length < 8 { head &= (1 &<< UInt64(length &* 8)) &- 1 }
        } else {
            for offset in 0..<Swift.min(length, 8) { head |= UInt64(base[start &+ offset]) &<< UInt64(offset &* 8) }
        }
        for slot in entries.indices {
            let entry = entries[slot]
            guard entry.length == length, entry.head == head else { continue }
            if length <= 8 || memcmp(entry.name.utf8Start + 8, base + start + 8, length &- 8) == 0 { return slot }
        }
        return nil
    }
}
