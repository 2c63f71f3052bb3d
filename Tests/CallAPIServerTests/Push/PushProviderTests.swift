import AsyncHTTPClient
import CallAPIPushMock
import CallAPIServerTesting
import CallAPISignalProtocol
import CallAPISystemCall
import Crypto
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The APNs and FCM providers against the local HTTP/2 TLS mock, which checks requests as the real services do.
@Suite(.serialized) struct PushProviderTests {
    static func job(_ device: PushDevice, callId: String = "call-1", clock: TestClock, ringSeconds: Int64 = 30)
        -> PushJob
    {
        PushJob(
            userId: "1002", device: device,
            call: CallPush(
                callId: callId, callerId: 1001, callerName: "Ada", video: true,
                ringDeadline: clock.nowMillis() + ringSeconds * 1000))
    }

    /// The reason of a push failed because APNs refused the provider token, or nil for any other outcome.
    static func refusal(_ outcome: PushOutcome) -> String? {
        if case .credentialRefused(let reason) = outcome { reason } else { nil }
    }

    @Test func apnsVoIPPushHasThePathHeadersPayloadAndAValidProviderToken() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        let provider = try await APNsProvider(settings: kit.apns, client: client, clock: kit.clock)
        let device = PushTestKit.apnsDevice()
        let job = Self.job(device, clock: kit.clock)

        #expect(await provider.send(job) == .delivered)

        let push = try #require(kit.mock.pushes.first)
        #expect(push.status == 200)
        #expect(push.httpMajorVersion == 2)
        #expect(push.path == "/3/device/\(device.token)")
        #expect(push.headers["apns-push-type"] == "voip")
        #expect(push.headers["apns-topic"] == PushTestKit.bundleId + ".voip")
        #expect(push.headers["apns-priority"] == "10")
        #expect(push.headers["apns-expiration"] == String(job.call.ringDeadline / 1000))
        let payload = try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [AnyHashable: Any] ?? [:]
        let read = try SystemCallPush(payload: payload)
        #expect(
            read
                == SystemCallPush(
                    callId: "call-1", callerId: 1001, callerName: "Ada", video: true,
                    ringDeadlineMillis: job.call.ringDeadline))
        #expect(payload["aps"] == nil)
        try await client.shutdown()
        await kit.stop()
    }

    @Test func apnsAlertPushCarriesARingtoneAndTheBundleTopic() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        let provider = try await APNsProvider(settings: kit.apns, client: client, clock: kit.clock)
        #expect(await provider.send(Self.job(PushTestKit.apnsDevice(kind: .alert), clock: kit.clock)) == .delivered)
        let push = try #require(kit.mock.pushes.first)
        #expect(push.headers["apns-push-type"] == "alert")
        #expect(push.headers["apns-topic"] == PushTestKit.bundleId)
        let payload = try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [String: Any] ?? [:]
        let aps = try #require(payload["aps"] as? [String: Any])
        #expect(aps["sound"] as? String == "ringtone.caf")
        #expect((aps["alert"] as? [String: Any])?["title"] as? String == "Ada")
        try await client.shutdown()
        await kit.stop()
    }

    @Test func apnsProviderTokenIsReusedWithinTwentyMinutesAndReplacedBeforeSixty() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        var settings = kit.apns
        // Asking for a refresh every 5 minutes is clamped to the 20 minutes APNs allows.
        settings.tokenRefreshMillis = 5 * 60_000
        let provider = try await APNsProvider(settings: settings, client: client, clock: kit.clock)
        let device = PushTestKit.apnsDevice()

        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .delivered)
        kit.clock.advance(seconds: 19 * 60)
        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .delivered)
        #expect(kit.mock.providerTokenUpdates == 1)
        #expect(await provider.providerToken.signedCount == 1)

        kit.clock.advance(seconds: 2 * 60)  // 21 minutes: due for a new one, and APNs accepts it
        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .delivered)
        #expect(kit.mock.providerTokenUpdates == 2)

        // The default schedule (50 minutes) replaces the token before APNs's 60-minute limit.
        let defaultProvider = try await APNsProvider(settings: kit.apns, client: client, clock: kit.clock)
        kit.clock.advance(seconds: 21 * 60)
        #expect(await defaultProvider.send(Self.job(device, clock: kit.clock)) == .delivered)
        for _ in 0..<6 {
            kit.clock.advance(seconds: 10 * 60)
            #expect(await defaultProvider.send(Self.job(device, clock: kit.clock)) == .delivered)
        }
        #expect(await defaultProvider.providerToken.signedCount == 2)
        #expect(kit.mock.pushes.allSatisfy { $0.status == 200 })
        try await client.shutdown()
        await kit.stop()
    }

    @Test func apnsErrorAnswersMapToRemovalRetryOrFailure() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        let provider = try await APNsProvider(settings: kit.apns, client: client, clock: kit.clock)
        let device = PushTestKit.apnsDevice()
        kit.mock.script(device.token, [.unregistered, .badDeviceToken, .tooManyRequests, .unavailable, .internalError])
        let outcomes = [
            await provider.send(Self.job(device, clock: kit.clock)),
            await provider.send(Self.job(device, clock: kit.clock)),
            await provider.send(Self.job(device, clock: kit.clock)),
            await provider.send(Self.job(device, clock: kit.clock)),
            await provider.send(Self.job(device, clock: kit.clock)),
        ]
        #expect(outcomes[0] == .unregistered("410 Unregistered"))
        #expect(outcomes[1] == .unregistered("400 BadDeviceToken"))
        #expect(outcomes[2] == .retry("429 TooManyRequests", afterMillis: nil))
        #expect(outcomes[3] == .retry("503 ServiceUnavailable", afterMillis: nil))
        #expect(outcomes[4] == .retry("500 InternalServerError", afterMillis: nil))

        // A provider token signed with the wrong key is refused for good.
        var wrong = kit.apns
        wrong.privateKeyPEM = P256.Signing.PrivateKey().pemRepresentation
        let impostor = try await APNsProvider(settings: wrong, client: client, clock: kit.clock)
        let refused = await impostor.send(Self.job(device, clock: kit.clock))
        #expect(Self.refusal(refused)?.hasPrefix("403 InvalidProviderToken") == true, "\(refused)")
        try await client.shutdown()
        await kit.stop()
    }

    @Test func anExpiredProviderTokenOldEnoughToReplaceIsReplacedAndThePushRetried() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        let provider = try await APNsProvider(settings: kit.apns, client: client, clock: kit.clock)
        let device = PushTestKit.apnsDevice()
        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .delivered)
        kit.clock.advance(seconds: 21 * 60)
        kit.mock.script(device.token, [.expiredProviderToken])
        #expect(
            await provider.send(Self.job(device, clock: kit.clock))
                == .retry("403 ExpiredProviderToken", afterMillis: nil))
        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .delivered)
        #expect(await provider.providerToken.signedCount == 2)
        try await client.shutdown()
        await kit.stop()
    }

    @Test func aProviderTokenRefusedWithinTwentyMinutesFailsPushesInsteadOfSigningAnother() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        // The provider's clock lags APNs's by 61 minutes: APNs finds every token it signs expired.
        let lagging = TestClock(kit.clock.nowMillis() - 61 * 60_000)
        let provider = try await APNsProvider(settings: kit.apns, client: client, clock: lagging)
        let job = Self.job(PushTestKit.apnsDevice(), clock: kit.clock)
        let first = await provider.send(job)
        #expect(Self.refusal(first)?.hasPrefix("403 ExpiredProviderToken") == true, "\(first)")
        // Three more pushes within 1.8 s: no new token, and no request reaches APNs with one.
        for _ in 0..<3 {
            lagging.advance(millis: 600)
            let again = await provider.send(job)
            #expect(Self.refusal(again) != nil, "\(again)")
        }
        #expect(await provider.providerToken.signedCount == 1)
        #expect(kit.mock.pushes.count == 1)
        // Once 20 minutes have passed, a new token is signed (and refused again, the clock still lagging).
        lagging.advance(seconds: 20 * 60)
        kit.clock.advance(seconds: 20 * 60)
        let later = await provider.send(job)
        #expect(Self.refusal(later) != nil, "the clock still lags: the new token is refused too, got \(later)")
        #expect(await provider.providerToken.signedCount == 2)
        #expect(kit.mock.pushes.count == 2)
        try await client.shutdown()
        await kit.stop()
    }

    @Test func pushesStartingTogetherShareOneProviderToken() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        let provider = try await APNsProvider(settings: kit.apns, client: client, clock: kit.clock)
        let devices = (0..<8).map { PushTestKit.apnsDevice("iphone-\($0)", token: String(format: "%064x", $0 + 1)) }
        let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
            for device in devices { group.addTask { await provider.send(Self.job(device, clock: kit.clock)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes == Array(repeating: .delivered, count: 8))
        #expect(await provider.providerToken.signedCount == 1)
        #expect(Set(kit.mock.pushes.compactMap { $0.headers["authorization"] }).count == 1)
        #expect(kit.mock.providerTokenUpdates == 1)

        // Ten simultaneous 403s for a token old enough to replace: their retries carry one new token.
        kit.clock.advance(seconds: 21 * 60)
        let ten = (0..<10).map { PushTestKit.apnsDevice("ipad-\($0)", token: String(format: "%064x", $0 + 100)) }
        for device in ten { kit.mock.script(device.token, [.expiredProviderToken]) }
        let refused = await withTaskGroup(of: PushOutcome.self) { group in
            for device in ten { group.addTask { await provider.send(Self.job(device, clock: kit.clock)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(refused == Array(repeating: .retry("403 ExpiredProviderToken", afterMillis: nil), count: 10))
        let retried = await withTaskGroup(of: PushOutcome.self) { group in
            for device in ten { group.addTask { await provider.send(Self.job(device, clock: kit.clock)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(retried == Array(repeating: .delivered, count: 10))
        #expect(await provider.providerToken.signedCount == 2)
        #expect(Set(kit.mock.pushes.compactMap { $0.headers["authorization"] }).count == 2)
        try await client.shutdown()
        await kit.stop()
    }

    @Test func fcmExchangesOnceSendsAHighPriorityDataMessageWithTheRemainingRingTimeAsTTL() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        let provider = try await FCMProvider(settings: kit.fcm, client: client, clock: kit.clock)
        let device = PushTestKit.fcmDevice()

        #expect(await provider.send(Self.job(device, callId: "a", clock: kit.clock, ringSeconds: 25)) == .delivered)
        kit.clock.advance(seconds: 30 * 60)
        #expect(await provider.send(Self.job(device, callId: "b", clock: kit.clock, ringSeconds: 12)) == .delivered)
        #expect(kit.mock.tokenExchanges == 1)
        #expect(await provider.accessToken.exchangeCount == 1)

        let pushes = kit.mock.pushes
        #expect(pushes.count == 2)
        let push = try #require(pushes.last)
        #expect(push.httpMajorVersion == 2)
        #expect(push.path == "/v1/projects/\(PushTestKit.projectId)/messages:send")
        #expect(push.headers["authorization"] == "Bearer mock-access-1")
        let body = try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [String: Any] ?? [:]
        let message = try #require(body["message"] as? [String: Any])
        #expect(message["token"] as? String == device.token)
        let android = try #require(message["android"] as? [String: Any])
        #expect(android["priority"] as? String == "high")
        #expect(android["ttl"] as? String == "12s")
        #expect(message["notification"] == nil)
        let data = try #require(message["data"] as? [AnyHashable: Any])
        #expect(try SystemCallPush(payload: data).callId == "b")

        // The access token expires after an hour: a new exchange before then.
        kit.clock.advance(seconds: 30 * 60)
        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .delivered)
        #expect(kit.mock.tokenExchanges == 2)
        try await client.shutdown()
        await kit.stop()
    }

    @Test func fcmErrorAnswersMapToRemovalOrRetry() async throws {
        let kit = try await PushTestKit.start()
        let client = try kit.httpClient()
        let provider = try await FCMProvider(settings: kit.fcm, client: client, clock: kit.clock)
        let device = PushTestKit.fcmDevice()
        kit.mock.script(device.token, [.unregistered, .unavailable, .tooManyRequests])
        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .unregistered("404 UNREGISTERED"))
        #expect(await provider.send(Self.job(device, clock: kit.clock)) == .retry("503 UNAVAILABLE", afterMillis: nil))
        #expect(
            await provider.send(Self.job(device, clock: kit.clock)) == .retry("429 QUOTA_EXCEEDED", afterMillis: nil))
        try await client.shutdown()
        await kit.stop()
    }
}
