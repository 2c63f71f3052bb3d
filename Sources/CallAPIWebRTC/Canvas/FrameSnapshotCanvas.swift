import CallAPI
import Foundation

/// A ``CallCanvas`` that, instead of showing video, saves the first frame rendered into it as a PNG file.
///
/// Give it to CallAPI as the remote view (or the local one) on a machine without a screen; after the call
/// connects, ``waitUntilSaved()`` tells whether `path` holds the frame. One frame per canvas: make a new
/// canvas for the next call.
public final class FrameSnapshotCanvas: CallCanvas {
    /// Where the PNG goes.
    public let path: String

    private struct State: Sendable {
        var outcome: Bool?
        var claimed = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Locked(State())

    public init(path: String) {
        self.path = path
    }

    /// Whether the frame was saved (`nil` while none came).
    public var saved: Bool? { state.withLock { $0.outcome } }

    /// Waits until a frame was saved (`true`) or saving failed (`false`).
    public func waitUntilSaved() async -> Bool {
        await withCheckedContinuation { continuation in
            let outcome = state.withLock { state -> Bool? in
                if state.outcome == nil { state.waiters.append(continuation) }
                return state.outcome
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }

    /// Whether this canvas still wants a frame (claims it: only the first caller gets `true`).
    func claimFrame() -> Bool {
        state.withLock { state in
            guard state.outcome == nil, !state.claimed else { return false }
            state.claimed = true
            return true
        }
    }

    /// Writes `png` to ``path`` (or records the failure) and wakes the waiters.
    func store(_ png: Data?) {
        var success = false
        if let png {
            success = (try? png.write(to: URL(fileURLWithPath: path), options: .atomic)) != nil
        }
        let waiters = state.withLock { state in
            state.outcome = success
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: success) }
    }
}
