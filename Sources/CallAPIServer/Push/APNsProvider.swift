import AsyncHTTPClient
import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sends call pushes to APNs over HTTP/2 (`POST /3/device/<token>`) with a token-based provider JWT.
public final class APNsProvider: PushProvider {
    let settings: APNsSettings
    private let client: HTTPClient
    let providerToken: APNsProviderToken
    private let clock: any SignalServerClock
    private let logger: Logger

    /// - Parameter client: an HTTP client (HTTP/2 is negotiated over TLS); the caller shuts it down.
    public init(
        settings: APNsSettings, client: HTTPClient, clock: any SignalServerClock = SystemServerClock(),
        logger: Logger = Logger(label: "callapi.push.apns")
    ) async throws {
        self.settings = settings
        self.client = client
        self.clock = clock
        self.logger = logger
        providerToken = try await APNsProviderToken(
            privateKeyPEM: settings.privateKeyPEM, keyId: settings.keyId, teamId: settings.teamId,
            refreshAfterMillis: settings.tokenRefreshMillis, clock: clock)
    }

    /// The request for `job`, without its authorization.
    static func request(for job: PushJob, settings: APNsSettings) -> HTTPClientRequest {
        let base = job.device.environment == .production ? settings.productionURL : settings.sandboxURL
        var request = HTTPClientRequest(url: base + "/3/device/" + job.device.token)
        request.method = .POST
        let topic = job.device.topic ?? ""
        let voip = job.device.kind == .voip
        request.headers.add(name: "apns-push-type", value: voip ? "voip" : "alert")
        request.headers.add(name: "apns-topic", value: voip && !topic.hasSuffix(".voip") ? topic + ".voip" : topic)
        request.headers.add(name: "apns-priority", value: "10")
        // After its deadline the call no longer rings: APNs must not deliver it later.
        request.headers.add(name: "apns-expiration", value: String(job.call.ringDeadline / 1000))
        request.headers.add(name: "apns-collapse-id", value: String(job.call.callId.prefix(64)))
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: payload(for: job, alertSound: settings.alertSound)))
        return request
    }

    /// The JSON body: the `callapi` object; an alert push adds `aps` with a title, a body and the ringtone.
    static func payload(for job: PushJob, alertSound: String) -> String {
        let call = job.call.objectJSON
        guard job.device.kind == .alert else { return "{\"callapi\":\(call)}" }
        let title = job.call.callerName ?? "User \(job.call.callerId)"
        let body = job.call.video ? "Incoming video call" : "Incoming audio call"
        struct Alert: Encodable {
            var title: String
            var body: String
        }
        struct APS: Encodable {
            var alert: Alert
            var sound: String
            var interruptionLevel = "time-sensitive"
            enum CodingKeys: String, CodingKey {
                case alert, sound
                case interruptionLevel = "interruption-level"
            }
        }
        let aps = CallPush.json(APS(alert: Alert(title: title, body: body), sound: alertSound))
        return "{\"aps\":\(aps),\"callapi\":\(call)}"
    }

    public func send(_ job: PushJob) async -> PushOutcome {
        let token: String
        do {
            token = try await providerToken.current()
        } catch let refusal as APNsProviderToken.Refusal {
            logger.error("APNs push not sent", metadata: ["problem": "\(refusal)"])
            return .credentialRefused(refusal.description)
        } catch {
            logger.error("cannot sign the APNs provider token", metadata: ["error": "\(error)"])
            return .failed("cannot sign the provider token")
        }
        var request = Self.request(for: job, settings: settings)
        request.headers.add(name: "authorization", value: "bearer " + token)
        let status: UInt
        let reason: String
        let retryAfter: Int64?
        do {
            let response = try await client.execute(request, timeout: .milliseconds(settings.requestTimeoutMillis))
            status = response.status.code
            retryAfter = response.headers.first(name: "retry-after").flatMap { Int64($0) }.map { $0 * 1000 }
            let body = try await response.body.collect(upTo: 64 * 1024)
            reason = Self.reason(in: body) ?? ""
        } catch {
            return .retry("request failed: \(type(of: error))", afterMillis: nil)
        }
        let outcome = await Self.outcome(status: status, reason: reason, retryAfterMillis: retryAfter) {
            await providerToken.reject(token, reason: "403 \(reason)")
        }
        if case .credentialRefused(let problem) = outcome {
            logger.error("APNs refused the provider token", metadata: ["problem": "\(problem)"])
        }
        return outcome
    }

    /// The `reason` of an APNs error body `{"reason":"BadDeviceToken"}`.
    static func reason(in body: ByteBuffer) -> String? {
        struct ErrorBody: Decodable { var reason: String }
        return try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView)).reason
    }

    /// What an APNs answer means for the push.
    static func outcome(
        status: UInt, reason: String, retryAfterMillis: Int64?, rejectToken: () async -> Bool
    ) async -> PushOutcome {
        switch status {
        case 200:
            return .delivered
        case 410:
            return .unregistered("410 \(reason)")
        case 400 where ["BadDeviceToken", "DeviceTokenNotForTopic"].contains(reason):
            return .unregistered("400 \(reason)")
        case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken":
            // A new token only when Apple allows one (APNsProviderToken): otherwise the push fails with the reason.
            guard await rejectToken() else {
                return .credentialRefused(
                    "403 \(reason); the provider token is not replaced: Apple allows one new token per 20 minutes")
            }
            return reason == "ExpiredProviderToken"
                ? .retry("403 \(reason)", afterMillis: nil) : .failed("403 \(reason)")
        case 429, 500...599:
            return .retry("\(status) \(reason)", afterMillis: retryAfterMillis)
        default:
            return .failed("\(status) \(reason)")
        }
    }
}

/// How the server reaches APNs.
public struct APNsSettings: Sendable, Equatable {
    /// The `.p8` auth key (PEM, ES256).
    public var privateKeyPEM: String
    /// The key's id (the JWT's `kid`).
    public var keyId: String
    /// The Apple developer team id (the JWT's `iss`).
    public var teamId: String
    /// Endpoints: overridable for tests and the local mock.
    public var productionURL = "https://api.push.apple.com"
    public var sandboxURL = "https://api.sandbox.push.apple.com"
    /// The provider token is replaced after this long (clamped to 20-59 minutes).
    public var tokenRefreshMillis: Int64 = 50 * 60_000
    /// The sound file of alert pushes (bundled with the app, at most 30 seconds).
    public var alertSound = "ringtone.caf"
    /// How long one request may take.
    public var requestTimeoutMillis: Int64 = 10_000

    public init(privateKeyPEM: String, keyId: String, teamId: String) {
        self.privateKeyPEM = privateKeyPEM
        self.keyId = keyId
        self.teamId = teamId
    }
}
