import CallAPISignalProtocol

/// What queues a frame for a session. The hub counts each frame against its receiver's outbox where it is produced
/// (and notes a session too slow to take it), so the machines nested in it (invitations, match) send through this
/// rather than returning frames for the hub to walk.
package protocol HubFrameQueue {
    /// Queues `frame` for `session`: appends its `send` to `actions`, or not when the session cannot take it.
    mutating func enqueue(_ frame: ServerFrame, to session: SessionID, into actions: inout [HubAction])
}

/// Frames appended as they come, uncounted: for a nested machine driven on its own.
package struct UncountedFrames: HubFrameQueue {
    package init() {}

    package mutating func enqueue(_ frame: ServerFrame, to session: SessionID, into actions: inout [HubAction]) {
        actions.append(.send(session, frame))
    }
}
