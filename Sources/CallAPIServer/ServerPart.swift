import CallAPIServerCore
import ServiceLifecycle

/// One long-running part of the server as a ServiceLifecycle service. ``SignalServer`` registers its parts in one
/// `ServiceGroup`, which starts them together and, on graceful shutdown, tells them to stop in the reverse of their
/// order, each after the one before has returned: the order is the shutdown sequence.
struct ServerPart: Service, CustomStringConvertible {
    let description: String
    private let work: @Sendable () async -> Void
    private let finish: @Sendable () -> Void
    private let grace: Duration?

    /// A part that does `work` until the graceful shutdown, when `finish` asks it to end what it has queued; `work`
    /// then returns. With `grace`, `work` is cancelled if it has not returned that long after `finish`.
    init(
        _ name: String, grace: Duration? = nil, work: @escaping @Sendable () async -> Void,
        finish: @escaping @Sendable () -> Void = {}
    ) {
        description = name
        self.work = work
        self.finish = finish
        self.grace = grace
    }

    /// A part that does nothing until the graceful shutdown, then does `work` and returns.
    static func atShutdown(_ name: String, _ work: @escaping @Sendable () async -> Void) -> ServerPart {
        ServerPart(
            name,
            work: {
                do { try await gracefulShutdown() } catch { return }  // cancelled: no shutdown sequence
                await work()
            })
    }

    /// A part that does `work` now and then every `interval`, until the graceful shutdown.
    static func every(
        _ interval: Duration, _ name: String, _ work: @escaping @Sendable () async -> Void
    ) -> ServerPart {
        ServerPart(
            name,
            work: {
                try? await cancelWhenGracefulShutdown {
                    while !Task.isCancelled {
                        await work()
                        try await Task.sleep(for: interval)
                    }
                }
            })
    }

    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withGracefulShutdownHandler {
                    await work()
                } onGracefulShutdown: {
                    finish()
                }
            }
            if let grace {
                group.addTask {
                    do { try await gracefulShutdown() } catch { return }
                    try? await Task.sleep(for: grace)
                }
            }
            // The first to end (the work, or the grace after the shutdown) ends the other.
            await group.next()
            group.cancelAll()
        }
    }
}
