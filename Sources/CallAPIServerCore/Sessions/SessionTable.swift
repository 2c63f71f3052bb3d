/// Values by session id, for the tables a relayed message looks sessions up in (about thirteen look-ups per
/// message: the sender's and the receiver's sessions, outboxes and connections).
///
/// The values lie in one dense array; an open-addressing index (linear probing, at most half full, a power of two
/// long) says where each id's value is. An id's number is spread over the index by Fibonacci hashing, a multiply
/// and a shift, where a `Dictionary` runs the standard library's seeded SipHash: about 20 instructions a look-up
/// against about 140 (callgrind, docs/benchmarks.md). Seeded hashing defends a table against keys chosen to
/// collide; these ids are the server's own numbers, handed out in sequence, never a client's choice.
///
/// Indices are positions in the dense array: valid until the next insertion or removal, as a `Dictionary`'s.
/// Removal moves the last value into the hole, so the order of iteration is not the order of insertion.
///
/// Public to this package's shell only (`@_spi(ServerShell)`) and inlinable throughout: the shell keeps its
/// connections in one too, and a generic type used across a module boundary unspecialized looks up its metadata on
/// every call. (`@inlinable package` members of a `package` type are not inlined into other modules by Swift 6.3.)
@_spi(ServerShell) public struct SessionTable<Value> {
    @usableFromInline struct Entry {
        @usableFromInline let id: SessionID
        /// Never nil while stored: optional so that ``subscript(_:)`` can lend it in place, and a caller that sets
        /// it to nil removes the entry.
        @usableFromInline var value: Value?

        @inlinable init(id: SessionID, value: Value?) {
            self.id = id
            self.value = value
        }
    }

    @usableFromInline var entries: ContiguousArray<Entry> = []
    /// Each slot holds an index into `entries`, or `Self.empty`.
    @usableFromInline var slots: [Int32] = []
    /// 64 minus the base-2 logarithm of `slots.count`: the top bits of the spread number pick the slot.
    @usableFromInline var shift: UInt64 = 64

    @inlinable static var empty: Int32 { -1 }

    @inlinable public init() {}

    @inlinable public var count: Int { entries.count }
    @inlinable public var isEmpty: Bool { entries.isEmpty }

    /// The position of `id`'s value, if the table holds it.
    @inlinable public func index(forKey id: SessionID) -> Int? {
        guard !slots.isEmpty else { return nil }
        var slot = home(of: id)
        let mask = slots.count &- 1
        while true {
            let index = slots[slot]
            if index == Self.empty { return nil }
            if entries[Int(index)].id == id { return Int(index) }
            slot = (slot &+ 1) & mask
        }
    }

    /// The value at `index` (from ``index(forKey:)``), changed in place.
    @inlinable public subscript(at index: Int) -> Value {
        get { entries[index].value! }
        _modify { yield &entries[index].value! }
    }

    /// The session id at `index`.
    @inlinable public func id(at index: Int) -> SessionID { entries[index].id }

    /// `id`'s value; set to nil to remove it. Changed in place, as a `Dictionary`'s: `table[id]?.field = x`.
    @inlinable public subscript(id: SessionID) -> Value? {
        get { index(forKey: id).map { entries[$0].value! } }
        _modify {
            if let index = index(forKey: id) {
                yield &entries[index].value
                if entries[index].value == nil { remove(at: index) }
            } else {
                var added: Value? = nil
                yield &added
                if let added { append(id, added) }
            }
        }
    }

    /// Stores `value` for `id`; returns the value it replaced, if any.
    @discardableResult @inlinable
    public mutating func updateValue(_ value: Value, forKey id: SessionID) -> Value? {
        if let index = index(forKey: id) {
            let old = entries[index].value
            entries[index].value = value
            return old
        }
        append(id, value)
        return nil
    }

    /// Removes `id`'s value and returns it, if the table held it.
    @discardableResult @inlinable
    public mutating func removeValue(forKey id: SessionID) -> Value? {
        guard let index = index(forKey: id) else { return nil }
        let value = entries[index].value
        remove(at: index)
        return value
    }

    /// The ids and values, in no particular order.
    @inlinable public var elements: some Sequence<(id: SessionID, value: Value)> {
        entries.lazy.map { (id: $0.id, value: $0.value!) }
    }

    /// The values, in no particular order.
    @inlinable public var values: some Sequence<Value> { entries.lazy.map { $0.value! } }

    // MARK: - The index

    /// The slot `id`'s probe starts at: the number multiplied by 2^64 divided by the golden ratio, its top bits.
    @inlinable func home(of id: SessionID) -> Int {
        Int(truncatingIfNeeded: (id.number &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    @inlinable mutating func append(_ id: SessionID, _ value: Value) {
        if (entries.count &+ 1) &* 2 > slots.count { grow() }
        entries.append(Entry(id: id, value: value))
        place(Int32(entries.count &- 1), id: id)
    }

    /// Puts `index` in the first empty slot of `id`'s probe.
    @inlinable mutating func place(_ index: Int32, id: SessionID) {
        var slot = home(of: id)
        let mask = slots.count &- 1
        while slots[slot] != Self.empty { slot = (slot &+ 1) & mask }
        slots[slot] = index
    }

    /// Twice as many slots (at least 8), and every entry placed again.
    @inlinable mutating func grow() {
        let count = max(8, slots.count &* 2)
        slots = Array(repeating: Self.empty, count: count)
        shift = UInt64(64 &- count.trailingZeroBitCount)
        for (index, entry) in entries.enumerated() { place(Int32(index), id: entry.id) }
    }

    /// The slot that holds `index`.
    @inlinable func slot(holding index: Int) -> Int {
        var slot = home(of: entries[index].id)
        let mask = slots.count &- 1
        while slots[slot] != Int32(index) { slot = (slot &+ 1) & mask }
        return slot
    }

    /// Removes the entry at `index`: its slot is emptied (the entries after it in their probes moved back, so no
    /// probe meets a gap before its entry), and the last entry moves into its place in the dense array.
    @inlinable mutating func remove(at index: Int) {
        var hole = slot(holding: index)
        let mask = slots.count &- 1
        var next = (hole &+ 1) & mask
        while slots[next] != Self.empty {
            let home = home(of: entries[Int(slots[next])].id)
            // The entry at `next` may fill the hole if its home is not cyclically within (hole, next].
            let distanceToNext = (next &- home) & mask
            let distanceToHole = (hole &- home) & mask
            if distanceToHole < distanceToNext {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        slots[hole] = Self.empty
        let last = entries.count &- 1
        if index != last {
            slots[slot(holding: last)] = Int32(index)
            entries.swapAt(index, last)
        }
        entries.removeLast()
    }
}

extension SessionTable: Sendable where Value: Sendable {}
extension SessionTable.Entry: Sendable where Value: Sendable {}
