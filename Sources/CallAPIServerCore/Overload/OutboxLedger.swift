/// What one connection's outbox holds: frames handed to its writer and not yet written, with their sizes, and
/// for relayed messages who sent them (so that they can be told if the frames are never written).
///
/// The state machines keep one per connection and check ``fits(bytes:maxFrames:maxBytes:)`` before every write;
/// the shell reports writes back (``written(_:)``). This is what bounds a slow reader's memory.
package struct OutboxLedger<Relayed: Sendable & Equatable>: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        var bytes: Int
        var relayed: Relayed?
    }

    /// Frames queued and not yet written.
    private(set) var frames = 0
    /// Their estimated bytes.
    private(set) var bytes = 0
    private var entries: [Entry] = []
    /// Index of the oldest unwritten entry (written ones before it are dropped in batches).
    private var head = 0

    /// Whether a frame of `bytes` may join the queue. A lone frame always fits, so that a frame up to the frame
    /// limit can reach an idle reader whatever the byte limit.
    func fits(bytes: Int, maxFrames: Int, maxBytes: Int) -> Bool {
        frames == 0 || (frames < maxFrames && self.bytes + bytes <= maxBytes)
    }

    /// Counts a frame handed to the writer.
    mutating func push(bytes: Int, relayed: Relayed?) {
        entries.append(Entry(bytes: bytes, relayed: relayed))
        frames += 1
        self.bytes += bytes
    }

    /// The writer wrote `count` frames (the oldest ones).
    mutating func written(_ count: Int) {
        let end = min(entries.count, head + max(0, count))
        for index in head..<end {
            bytes -= entries[index].bytes
        }
        frames -= end - head
        head = end
        if head == entries.count {
            entries.removeAllInPlace()
            head = 0
        } else if head >= 64, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The relayed messages still queued, oldest first: the ones a closed connection never got.
    var unwritten: [Relayed] { entries[head...].compactMap(\.relayed) }
}
