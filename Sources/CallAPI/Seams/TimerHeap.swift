/// Scheduled values by deadline, earliest first: a binary heap whose entries can also be removed before they are
/// due (a cancelled timer leaves at once, so a heap of timers mostly cancelled, as call timers are, stays small).
///
/// Equal deadlines come out in the order they went in. Pure: the caller says what time it is.
package struct TimerHeap<Value> {
    /// Names an entry, to remove it: a slot of ``slots`` and which use of that slot it was. Slots are reused, so
    /// a key spent (its entry removed or taken) does not name the slot's later entry.
    package struct Key: Sendable {
        fileprivate let slot: Int
        fileprivate let use: UInt32
    }

    private struct Entry {
        let deadline: UInt64
        /// Insertion order, which orders equal deadlines.
        let order: UInt64
        let key: Key
        let value: Value

        /// Earlier deadline first; the earlier inserted first among equal deadlines.
        func precedes(_ other: Entry) -> Bool {
            (deadline, order) < (other.deadline, other.order)
        }
    }

    /// Where a key's entry is in `entries`, kept in an array indexed by the key's slot: a dictionary from keys to
    /// positions hashed a key on every swap of a sift, most of what starting and cancelling a timer cost in a
    /// heap of a few hundred (the calls bench's client, docs/benchmarks.md).
    private struct Slot {
        /// The entry's position, while the slot is in use.
        var position: Int?
        var use: UInt32
    }

    private var entries: [Entry] = []
    private var slots: [Slot] = []
    /// Slots not in use, to be used again.
    private var freeSlots: [Int] = []
    private var nextOrder: UInt64 = 0

    package init() {}

    package var count: Int { entries.count }

    /// The earliest deadline, if any entry is left.
    package var earliestDeadline: UInt64? { entries.first?.deadline }

    package mutating func insert(_ value: Value, deadline: UInt64) -> Key {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot].use &+= 1
        } else {
            slot = slots.count
            slots.append(Slot(position: nil, use: 0))
        }
        let key = Key(slot: slot, use: slots[slot].use)
        entries.append(Entry(deadline: deadline, order: nextOrder, key: key, value: value))
        nextOrder &+= 1
        slots[slot].position = entries.count - 1
        siftUp(from: entries.count - 1)
        return key
    }

    /// Takes out the entry `key` names; `nil` if it already left (removed, or taken as due).
    package mutating func remove(_ key: Key) -> Value? {
        guard key.slot < slots.count, slots[key.slot].use == key.use, let index = slots[key.slot].position else {
            return nil
        }
        return removeEntry(at: index).value
    }

    /// Takes out every entry due at `now` (deadline at or before it), earliest first.
    package mutating func takeDue(now: UInt64) -> [Value] {
        var due: [Value] = []
        while let first = entries.first, first.deadline <= now {
            due.append(removeEntry(at: 0).value)
        }
        return due
    }

    private mutating func removeEntry(at index: Int) -> Entry {
        let removed = entries[index]
        slots[removed.key.slot].position = nil
        freeSlots.append(removed.key.slot)
        let last = entries.removeLast()
        guard index < entries.count else { return removed }
        entries[index] = last
        slots[last.key.slot].position = index
        // The moved entry may belong above or below its new place.
        siftUp(from: index)
        siftDown(from: slots[last.key.slot].position.unsafelyUnwrapped)
        return removed
    }

    private mutating func siftUp(from start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard entries[index].precedes(entries[parent]) else { return }
            swapEntries(index, parent)
            index = parent
        }
    }

    private mutating func siftDown(from start: Int) {
        var index = start
        while true {
            let left = 2 * index + 1
            guard left < entries.count else { return }
            let right = left + 1
            let child = right < entries.count && entries[right].precedes(entries[left]) ? right : left
            guard entries[child].precedes(entries[index]) else { return }
            swapEntries(index, child)
            index = child
        }
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        slots[entries[a].key.slot].position = a
        slots[entries[b].key.slot].position = b
    }
}
