import CallAPIServerCore
import NIOConcurrencyHelpers

/// Frames written to the connections' sockets since the hub last looked, as the writes completed.
///
/// The connections report here under a lock of its own when a write completes, instead of taking the hub's lock
/// once per write; the hub drains the tally before each event and feeds it to its state machine, whose outbox counts
/// can only lag behind (and so err on the safe side). Writes are kept in order in an array, not summed per
/// connection: the two arrays swap at each drain and keep their storage, so a steady flow neither hashes nor
/// allocates (a dictionary handed over at each drain was copied, and the copy reallocated).
final class WriteTally: Sendable {
    private struct Write {
        let id: SessionID
        let frames: Int
    }

    private let reported = NIOLockedValueBox<[Write]>([])
    /// The writes being drained (touched by ``drain(_:)`` only, which the hub calls under its own lock).
    private let draining = NIOLockedValueBox<[Write]>([])

    /// `frames` more frames were written to `id`'s socket.
    func wrote(_ id: SessionID, frames: Int = 1) {
        reported.withLockedValue { $0.append(Write(id: id, frames: frames)) }
    }

    /// Hands `body` every write reported since the last drain, oldest first. Writers are held up only for the
    /// swap, not while `body` runs.
    func drain(_ body: (SessionID, _ frames: Int) -> Void) {
        draining.withLockedValue { batch in
            reported.withLockedValue { swap(&$0, &batch) }
            for write in batch { body(write.id, write.frames) }
            batch.removeAllInPlace()
        }
    }
}
