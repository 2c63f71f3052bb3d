/// Scheduled values by deadline, earliest first: a binary heap whose entries can also be removed before they are
/// due (a cancelled timer leaves at once, so a heap of timers mostly cancelled, as call timers are, stays small).
///
/// Equal deadlines come out in the order they went in. Pure: the caller says what time it is.
package struct TimerHeap<Value> {
    /// Names an entry, to remove it.
    package struct Key: Hashable, Sendable {
        fileprivate let number: UInt64
    }

    private struct Entry {
        let deadline: UInt64
        let key: Key
        let value: Value

        /// Earlier deadline first; the earlier inserted first among equal deadlines.
        func precedes(_ other: Entry) -> Bool {
            (deadline, key.number) < (other.deadline, other.key.number)
        }
    }

    private var entries: [Entry] = []
    /// Where each entry is in `entries`.
    private var positions: [Key: Int] = [:]
    private var nextKey: UInt64 = 0

    package init() {}

    package var count: Int { entries.count }

    /// The earliest deadline, if any entry is left.
    package var earliestDeadline: UInt64? { entries.first?.deadline }

    package mutating func insert(_ value: Value, deadline: UInt64) -> Key {
        let key = Key(number: nextKey)
        nextKey &+= 1
        entries.append(Entry(deadline: deadline, key: key, value: value))
        positions[key] = entries.count - 1
        siftUp(from: entries.count - 1)
        return key
    }

    /// Takes out the entry `key` names; `nil` if it already left (removed, or taken as due).
    package mutating func remove(_ key: Key) -> Value? {
        guard let index = positions[key] else { return nil }
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
        positions[removed.key] = nil
        let last = entries.removeLast()
        guard index < entries.count else { return removed }
        entries[index] = last
        positions[last.key] = index
        // The moved entry may belong above or below its new place.
        siftUp(from: index)
        siftDown(from: positions[last.key].unsafelyUnwrapped)
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
        positions[entries[a].key] = a
        positions[entries[b].key] = b
    }
}
