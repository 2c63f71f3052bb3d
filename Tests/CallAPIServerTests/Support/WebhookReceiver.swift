import CallAPIServerTesting
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// A Hummingbird app on an ephemeral port that records the webhook posts it gets, failing the first few.
final class WebhookReceiver: Sendable {
    /// One post: its body and signature header.
    struct Post: Sendable {
        var body: String
        var signature: String?
    }

    /// Every request, accepted or not.
    let attempts: AsyncStream<Post>
    /// The accepted posts.
    let posts: AsyncStream<Post>
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    var url: String { "http://127.0.0.1:\(port)/hook" }

    /// Starts a receiver that answers 500 to its first `failing` requests (all of them with `failing` < 0).
    static func start(failing: Int = 0) async throws -> WebhookReceiver {
        let (attempts, attemptsContinuation) = AsyncStream.makeStream(of: Post.self)
        let (posts, postsContinuation) = AsyncStream.makeStream(of: Post.self)
        let count = NIOLockedValueBox(0)
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            let post = Post(
                body: String(buffer: buffer),
                signature: request.headers.first { $0.name.canonicalName == "x-callapi-signature" }?.value)
            attemptsContinuation.yield(post)
            let number = count.withLockedValue {
                $0 += 1
                return $0
            }
            if failing < 0 || number <= failing { return .internalServerError }
            postsContinuation.yield(post)
            return .noContent
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: quietLogger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: quietLogger))
        let task = Task { try await group.run() }
        let port = try await ports.first(within: 10, "the receiver to listen") { _ in true }
        return WebhookReceiver(attempts: attempts, posts: posts, port: port, group: group, task: task)
    }

    private init(
        attempts: AsyncStream<Post>, posts: AsyncStream<Post>, port: Int, group: ServiceGroup,
        task: Task<Void, any Error>
    ) {
        self.attempts = attempts
        self.posts = posts
        self.port = port
        self.group = group
        self.task = task
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await withTimeout(10, "the receiver to stop") { [task] in try await task.value }
    }
}
