import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import Crypto
import Foundation
import Testing

/// Channel events posted to the operator's webhook: signed, in order, retried, never dropped silently.
@Suite struct ChannelWebhookTests {
    let secret = "webhook-secret"

    func startServer(_ receiver: WebhookReceiver, maxAttempts: Int = 5) async throws -> TestServer {
        try await TestServer.start { [secret] configuration in
            var webhook = WebhookSettings(url: receiver.url, secret: secret)
            webhook.retryBaseMillis = 10
            webhook.maxAttempts = maxAttempts
            configuration.channels.webhook = webhook
        }
    }

    func expectedSignature(_ body: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + code.map { String(format: "%02x", $0) }.joined()
    }

    func notice(_ post: WebhookReceiver.Post) throws -> ChannelNotice {
        try JSONDecoder().decode(ChannelNotice.self, from: Data(post.body.utf8))
    }

    @Test func joinsAndLeavesArePostedInOrderWithAnHMACSignature() async throws {
        let receiver = try await WebhookReceiver.start()
        let server = try await startServer(receiver)
        let (alice, _) = try await server.joined(1001, channel: "room")
        alice.send(.leave)
        var posts = receiver.posts.makeAsyncIterator()
        let first = try #require(await posts.next())
        let second = try #require(await posts.next())
        #expect(first.signature == expectedSignature(first.body))
        #expect(second.signature == expectedSignature(second.body))
        let joined = try notice(first)
        let left = try notice(second)
        #expect(
            joined.event == .userJoined && joined.reason == .joined && joined.channel == "room" && joined.uid == 1001)
        #expect(left.event == .userLeft && left.reason == .quit)
        #expect(first.body.contains("\"event\":\"userJoined\"") && first.body.contains("\"uid\":1001"))
        #expect(joined.time > 1_700_000_000_000)
        try await server.stop()
        #expect(server.server.metricsText().contains("callapi_webhook_deliveries_total 2"))
        await receiver.stop()
    }

    @Test func aFailingReceiverGetsTheEventOnARetry() async throws {
        let receiver = try await WebhookReceiver.start(failing: 2)
        let server = try await startServer(receiver)
        let (alice, _) = try await server.joined(1001, channel: "room")
        let post = try await receiver.posts.first(within: 10, "the retried post") { _ in true }
        #expect(try notice(post).event == .userJoined)
        withExtendedLifetime(alice) {}
        try await server.stop()
        #expect(server.server.metricsText().contains("callapi_webhook_failures_total 0"))
        await receiver.stop()
    }

    @Test func anEventThatCannotBeDeliveredIsCountedAsAFailure() async throws {
        let receiver = try await WebhookReceiver.start(failing: -1)
        let server = try await startServer(receiver, maxAttempts: 2)
        let (alice, _) = try await server.joined(1001, channel: "room")
        var attempts = receiver.attempts.makeAsyncIterator()
        _ = await attempts.next()
        _ = await attempts.next()
        withExtendedLifetime(alice) {}
        try await server.stop()  // waits for the notifier to finish: the join's and the shutdown's events fail
        #expect(server.server.metricsText().contains("callapi_webhook_failures_total 2"))
        #expect(server.server.metricsText().contains("callapi_webhook_deliveries_total 0"))
        await receiver.stop()
    }

    @Test func kicksAndShutdownsArePostedWithTheirReasons() async throws {
        let receiver = try await WebhookReceiver.start()
        let server = try await startServer(receiver)
        let (alice, _) = try await server.joined(1001, channel: "room")
        let (bob, _) = try await server.joined(1002, channel: "room")
        _ = try await server.admin("POST", "/v1/channels/room/kick", body: "{\"uid\":1002}")
        withExtendedLifetime((alice, bob)) {}
        try await server.stop()
        var reasons: [ChannelNotice.Reason] = []
        for await post in receiver.posts {
            reasons.append(try notice(post).reason)
            if reasons.count == 4 { break }
        }
        #expect(reasons == [.joined, .joined, .kicked, .shutdown])
        await receiver.stop()
    }
}
