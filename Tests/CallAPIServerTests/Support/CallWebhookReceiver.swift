import CallAPIServerTesting
import Hummingbird
import NIOConcurrencyHelpers
import ServiceLifecycle

/// A real HTTP receiver of call webhooks on a loopback port that it can leave and take again (the receiver going
/// down and coming back): it records every post it gets and answers 204.
final class CallWebhookReceiver: Sendable {
    /// One post as received.
    struct Post: Sendable, Equatable {
        var idempotencyKey: String?
        var sequence: String?
        var attempt: String?
        var signature: String?
        var body: String
    }

    private struct Listener: Sendable {
        var group: ServiceGroup
        var task: Task<Void, any Error>
    }

    private let received = NIOLockedValueBox<[Post]>([])
    private let listener = NIOLockedValueBox<Listener?>(nil)
    private let boundPort = NIOLockedValueBox(0)

    var port: Int { boundPort.withLockedValue { $0 } }
    var url: String { "http://127.0.0.1:\(port)/calls" }
    /// Every post, in arrival order.
    var posts: [Post] { received.withLockedValue { $0 } }

    /// Listens (on a free port the first time, then on the same one).
    func start() async throws {
        let router = Router()
        let received = received
        router.post("/calls") { request, _ -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            func header(_ name: String) -> String? {
                request.headers.first { $0.name.canonicalName == name }?.value
            }
            let post = Post(
                idempotencyKey: header("idempotency-key"), sequence: header("x-callapi-sequence"),
                attempt: header("x-callapi-attempt"), signature: header("x-callapi-signature"),
                body: String(buffer: buffer))
            received.withLockedValue { $0.append(post) }
            return .noContent
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: quietLogger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: quietLogger))
        let task = Task { try await group.run() }
        let bound = try await ports.first(within: 10, "the webhook receiver to listen") { _ in true }
        boundPort.withLockedValue { $0 = bound }
        listener.withLockedValue { $0 = Listener(group: group, task: task) }
    }

    /// Stops listening: connections to the port are refused until ``start()``.
    func stop() async {
        guard
            let current = listener.withLockedValue({ listener in
                defer { listener = nil }; return listener
            })
        else {
            return
        }
        await current.group.triggerGracefulShutdown()
        _ = try? await withTimeout(10, "the webhook receiver to stop") { try await current.task.value }
    }
}
