package extension Array {
    /// Removes every element and keeps the storage, popping them from the end.
    ///
    /// The hub empties its short lists (an event's actions, a tick's connections, an outbox's written frames)
    /// once or more per relayed message. `removeAll(keepingCapacity: true)` goes through the general
    /// `replaceSubrange`, which cost about 375 instructions for a list of one to three elements (callgrind,
    /// docs/benchmarks.md); popping them costs a few dozen, and is no worse for a long list. Inlinable: the server
    /// shell empties its lists with it too, and unspecialized across the module boundary it looked up generic
    /// metadata on every call (scripts/callgrind_relay.sh: ~3,300 instructions per relayed message).
    @inlinable mutating func removeAllInPlace() {
        while !isEmpty { removeLast() }
    }
}
