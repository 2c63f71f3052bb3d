import NIOCore

/// Calls from a client's API into its core, run in the order they are made on the core's event loop, the loop its
/// socket reads and writes on. The core is confined to that loop, so it needs no lock and no actor, and a frame the
/// socket reads reaches it without a thread hop (docs/architecture.md, "The client's data path").
struct LoopCommands<Core>: Sendable {
    private let box: NIOLoopBoundBox<Core>

    var loop: any EventLoop { box.eventLoop }

    /// Confines `core` to `loop`; from here on it is only touched there.
    init(_ core: sending Core, on loop: any EventLoop) {
        box = NIOLoopBoundBox.makeBoxSendingValue(core, as: Core.self, eventLoop: loop)
    }

    /// Runs `body` on the loop, after every command issued before it. Never inline, even when already on the
    /// loop: a listener that calls back into the client from inside the core's work waits its turn, as an actor's
    /// caller would.
    func yield(_ body: @escaping @Sendable (Core) -> Void) {
        let box = box
        box.eventLoop.execute { body(box.value) }
    }

    /// What `body` answers, read on the loop.
    func ask<Answer: Sendable>(_ body: @escaping @Sendable (Core) -> Answer) async throws -> Answer {
        let box = box
        return try await box.eventLoop.submit { body(box.value) }.get()
    }

    /// Runs `body` on the loop after `delay`, unless cancelled first.
    func schedule(in delay: TimeAmount, _ body: @escaping @Sendable (Core) -> Void) -> Scheduled<Void> {
        let box = box
        return box.eventLoop.scheduleTask(in: delay) { body(box.value) }
    }
}
