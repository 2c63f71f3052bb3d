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

/// Sends call pushes through FCM HTTP v1 (`POST /v1/projects/<id>/messages:send`): high-priority data messages
/// whose TTL is what remains of the ring time.
public final class FCMProvider: PushProvider {
    let settings: FCMSettings
    private let client: HTTPClient
    let accessToken: FCMAccessToken
    private let clock: any SignalServerClock
    private let logger: Logger

    public init(
        settings: FCMSettings, client: HTTPClient, clock: any SignalServerClock = SystemServerClock(),
        logger: Logger = Logger(label: "callapi.push.fcm")
    ) async throws {
        self.settings = settings
        self.client = client
        self.clock = clock
        self.logger = logger
        accessToken = try await FCMAccessToken(
            account: settings.account, tokenURL: settings.tokenURL ?? settings.account.tokenURI, client: client,
            clock: clock, timeoutMillis: settings.requestTimeoutMillis)
    }

    /// The message body for `job`, sent at `now`.
    static func body(for job: PushJob, now: Int64) -> String {
        struct Notification: Encodable {
            var title: String
            var body: String
        }
        struct AndroidNotification: Encodable {
            var sound = "default"
            var channel_id = "calls"
        }
        struct Android: Encodable {
            var priority = "high"
            var ttl: String
            var notification: AndroidNotification?
        }
        struct Message: Encodable {
            var token: String
            var data: [String: String]
            var android: Android
            var notification: Notification?
        }
        struct Envelope: Encodable { var message: Message }
        let remaining = max(0, (job.call.ringDeadline - now + 999) / 1000)
        let alert = job.device.kind == .alert
        let message = Message(
            token: job.device.token, data: ["callapi": job.call.objectJSON],
            android: Android(ttl: "\(remaining)s", notification: alert ? AndroidNotification() : nil),
            notification: alert
                ? Notification(
                    title: job.call.callerName ?? "User \(job.call.callerId)",
                    body: job.call.video ? "Incoming video call" : "Incoming audio call") : nil)
        return CallPush.json(Envelope(message: message))
    }

    public func send(_ job: PushJob) async -> PushOutcome {
        let token: String
        do {
            token = try await accessToken.current()
        } catch {
            logger.warning("FCM access token exchange failed", metadata: ["error": "\(error)"])
            return .retry("token exchange failed", afterMillis: nil)
        }
        var request = HTTPClientRequest(
            url: settings.endpoint + "/v1/projects/\(settings.account.projectId)/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer " + token)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: Self.body(for: job, now: clock.nowMillis())))
        do {
            let response = try await client.execute(request, timeout: .milliseconds(settings.requestTimeoutMillis))
            let body = try await response.body.collect(upTo: 64 * 1024)
            let retryAfter = response.headers.first(name: "retry-after").flatMap { Int64($0) }.map { $0 * 1000 }
            let status = response.status.code
            if status == 401 { await accessToken.reject(token) }
            return Self.outcome(status: status, errorCode: Self.errorCode(in: body), retryAfterMillis: retryAfter)
        } catch {
            return .retry("request failed: \(type(of: error))", afterMillis: nil)
        }
    }

    /// The FCM error code of an error body: `details[].errorCode`, else `error.status`.
    static func errorCode(in body: ByteBuffer) -> String {
        struct Detail: Decodable { var errorCode: String? }
        struct ErrorInfo: Decodable {
            var status: String?
            var details: [Detail]?
        }
        struct ErrorBody: Decodable { var error: ErrorInfo }
        guard let answer = try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView)) else {
            return ""
        }
        return answer.error.details?.compactMap(\.errorCode).first ?? answer.error.status ?? ""
    }

    /// What an FCM answer means for the push.
    static func outcome(status: UInt, errorCode: String, retryAfterMillis: Int64?) -> PushOutcome {
        switch status {
        case 200:
            return .delivered
        case 404 where errorCode == "UNREGISTERED" || errorCode == "NOT_FOUND":
            return .unregistered("404 \(errorCode)")
        case 401:
            return .retry("401 \(errorCode)", afterMillis: nil)
        case 429, 500...599:
            return .retry("\(status) \(errorCode)", afterMillis: retryAfterMillis)
        default:
            return .failed("\(status) \(errorCode)")
        }
    }
}

/// How the server reaches FCM.
public struct FCMSettings: Sendable, Equatable {
    public var account: FCMServiceAccount
    /// The FCM API's base URL (overridable for tests and the local mock).
    public var endpoint = "https://fcm.googleapis.com"
    /// The OAuth2 token endpoint; nil uses the service account's `token_uri`.
    public var tokenURL: String?
    /// How long one request may take.
    public var requestTimeoutMillis: Int64 = 10_000

    public init(account: FCMServiceAccount) {
        self.account = account
    }
}
