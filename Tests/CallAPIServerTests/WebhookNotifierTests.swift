import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The webhook notifier on its own: the signature and the bounded queue.
@Suite struct WebhookNotifierTests {
    let notice = ChannelNotice(event: .userJoined, channel: "room", uid: 1001, reason: .joined, time: 5)

    @Test func theSignatureIsTheHexHMACSHA256OfTheBody() {
        // The RFC 2104 style example vector for HMAC-SHA256.
        #expect(
            WebhookNotifier.signature(of: "The quick brown fox jumps over the lazy dog", secret: "key")
                == "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8")
    }

    @Test func theBodyHasTheDocumentedFields() {
        #expect(
            WebhookNotifier.body(of: notice)
                == "{\"channel\":\"room\",\"event\":\"userJoined\",\"reason\":\"joined\",\"time\":5,\"uid\":1001}")
    }

    @Test func eventsBeyondTheQueueLimitAreCountedAsFailures() {
        let metrics = ServerMetrics()
        var settings = WebhookSettings(url: "http://127.0.0.1:9/hook")
        settings.queueLimit = 2
        let notifier = WebhookNotifier(settings: settings, metrics: metrics, logger: quietLogger)
        for _ in 1...5 { notifier.post(notice) }
        #expect(metrics.render().contains("callapi_webhook_failures_total 3"))
        notifier.finish()
        notifier.post(notice)
        #expect(metrics.render().contains("callapi_webhook_failures_total 4"))
    }
}
