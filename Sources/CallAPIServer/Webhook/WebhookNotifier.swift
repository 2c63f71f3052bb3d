import AsyncHTTPClient
import CallAPIServerCore
import Crypto
import Logging
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Posts channel events to the operator's webhook: in order, from one background task, each retried with
/// exponential backoff. An event that cannot be delivered (attempts used up, queue full, server stopping) is logged
/// and counted, never dropped silently.
final class WebhookNotifier: Sendable {
    /// The header carrying `sha256=<hex HMAC-SHA256 of the body>` when a secret is set.
    static let signatureHeader = "X-CallAPI-Signature"

    private let settings: WebhookSettings
    private let metrics: ServerMetrics
    private let logger: Logger
    private let queue: AsyncStream<ChannelNotice>
    private let continuation: AsyncStream<ChannelNotice>.Continuation

    init(settings: WebhookSettings, metrics: ServerMetrics, logger: Logger) {
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        (queue, continuation) = AsyncStream.makeStream(
            of: ChannelNotice.self, bufferingPolicy: .bufferingOldest(max(1, settings.queueLimit)))
    }

    /// Queues `notice` for delivery.
    func post(_ notice: ChannelNotice) {
        switch continuation.yield(notice) {
        case .enqueued:
            break
        case .dropped:
            giveUp(notice, "the webhook queue is full (\(settings.queueLimit) events)")
        case .terminated:
            giveUp(notice, "the webhook has stopped")
        @unknown default:
            giveUp(notice, "the webhook queue refused it")
        }
    }

    /// Delivers queued events until ``finish()``; then the rest, and returns.
    func run() async {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        for await notice in queue {
            await deliver(notice, with: client)
        }
        try? await client.shutdown()
    }

    /// No more events: ``run()`` delivers what is queued and returns.
    func finish() { continuation.finish() }

    /// The JSON body of `notice`.
    static func body(of notice: ChannelNotice) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and numbers cannot fail.
        return String(decoding: try! encoder.encode(notice), as: UTF8.self)
    }

    /// `sha256=<hex HMAC-SHA256 of body keyed with secret>`.
    static func signature(of body: String, secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(
            for: Array(body.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return "sha256=" + code.map { byte in String(byte, radix: 16).leftPadded(to: 2) }.joined()
    }

    private func deliver(_ notice: ChannelNotice, with client: HTTPClient) async {
        let body = Self.body(of: notice)
        var request = HTTPClientRequest(url: settings.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let secret = settings.secret {
            request.headers.add(name: Self.signatureHeader, value: Self.signature(of: body, secret: secret))
        }
        request.body = .bytes(ByteBuffer(string: body))
        var lastProblem = ""
        for attempt in 1...max(1, settings.maxAttempts) {
            do {
                let response = try await client.execute(request, timeout: .milliseconds(settings.timeoutMillis))
                _ = try? await response.body.collect(upTo: 64 * 1024)
                if (200..<300).contains(response.status.code) {
                    metrics.webhookDelivered()
                    return
                }
                lastProblem = "the receiver answered \(response.status.code)"
            } catch {
                lastProblem = "\(error)"
            }
            logger.warning(
                "webhook delivery failed",
                metadata: ["attempt": "\(attempt)", "event": "\(notice.event.rawValue)", "problem": "\(lastProblem)"])
            if attempt < settings.maxAttempts {
                try? await Task.sleep(for: .milliseconds(settings.retryBaseMillis << Int64(attempt - 1)))
            }
        }
        giveUp(notice, "\(settings.maxAttempts) attempts failed; the last: \(lastProblem)")
    }

    private func giveUp(_ notice: ChannelNotice, _ problem: String) {
        metrics.webhookFailed()
        logger.error(
            "webhook event not delivered",
            metadata: [
                "event": "\(notice.event.rawValue)", "channel": "\(notice.channel)", "uid": "\(notice.uid)",
                "reason": "\(notice.reason.rawValue)", "time": "\(notice.time)", "problem": "\(problem)",
            ])
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
