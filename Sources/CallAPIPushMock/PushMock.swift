import Crypto
import Foundation
import NIOConcurrencyHelpers
import _CryptoExtras

/// What the mock checks and records: the APNs and FCM rules, applied to one request at a time. The server
/// (``PushMockServer``) feeds it requests; tests read ``pushes`` and script answers.
public final class PushMock: Sendable {
    /// APNs: the auth key that signs provider tokens.
    public struct APNsAccount: Sendable {
        public var keyId: String
        public var teamId: String
        public var publicKey: P256.Signing.PublicKey
        public init(keyId: String, teamId: String, publicKey: P256.Signing.PublicKey) {
            self.keyId = keyId
            self.teamId = teamId
            self.publicKey = publicKey
        }
    }

    /// FCM: the service account and its project.
    public struct FCMAccount: Sendable {
        public var projectId: String
        public var clientEmail: String
        public var keyId: String
        public var publicKey: _RSA.Signing.PublicKey
        public init(projectId: String, clientEmail: String, keyId: String, publicKey: _RSA.Signing.PublicKey) {
            self.projectId = projectId
            self.clientEmail = clientEmail
            self.keyId = keyId
            self.publicKey = publicKey
        }
    }

    /// The mock's token endpoint path (FCM's OAuth2 exchange).
    public static let tokenPath = "/token"
    /// APNs refuses provider tokens older than this.
    static let providerTokenMaxAgeSeconds: Int64 = 3600
    /// APNs refuses a new provider token sooner than this after the previous one.
    static let providerTokenMinUpdateSeconds: Int64 = 20 * 60

    public let apns: APNsAccount?
    public let fcm: FCMAccount?
    /// What each device token receives: the payloads of the pushes accepted for it.
    public let devices = MockDeviceInbox()
    private let now: @Sendable () -> Int64

    private struct State {
        var pushes: [RecordedPush] = []
        var scripted: [String: [MockAnswer]] = [:]
        var unregistered: Set<String> = []
        /// The last provider token seen and its `iat`, per key id.
        var providerTokens: [String: (token: String, iat: Int64)] = [:]
        var providerTokenUpdates = 0
        var accessTokens: Set<String> = []
        var exchanges = 0
        var waiters: [(id: Int, count: Int, continuation: CheckedContinuation<[RecordedPush], Never>)] = []
        var nextWaiter = 0
    }
    private let state = NIOLockedValueBox(State())

    /// - Parameter now: the mock's clock (milliseconds since 1970), for the provider token's age rules.
    public init(apns: APNsAccount?, fcm: FCMAccount?, now: @escaping @Sendable () -> Int64) {
        self.apns = apns
        self.fcm = fcm
        self.now = now
    }

    /// Every push received so far, in order.
    public var pushes: [RecordedPush] { state.withLockedValue { $0.pushes } }
    /// How many distinct APNs provider tokens were accepted.
    public var providerTokenUpdates: Int { state.withLockedValue { $0.providerTokenUpdates } }
    /// How many FCM token exchanges succeeded.
    public var tokenExchanges: Int { state.withLockedValue { $0.exchanges } }

    /// Answers the next pushes to `deviceToken` with `answers`, in order (then normally again).
    public func script(_ deviceToken: String, _ answers: [MockAnswer]) {
        state.withLockedValue { $0.scripted[deviceToken, default: []] += answers }
    }

    /// Answers every push to `deviceToken` as no longer registered.
    public func unregister(_ deviceToken: String) {
        _ = state.withLockedValue { $0.unregistered.insert(deviceToken) }
    }

    /// Returns once at least `count` pushes were received (all of them, in order), or, when the waiting task is
    /// cancelled, at once with those received so far (fewer: a caller's timeout then reports what was missing).
    public func waitForPushes(_ count: Int) async -> [RecordedPush] {
        let id = state.withLockedValue { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: [RecordedPush]? = state.withLockedValue { state in
                    if state.pushes.count >= count || Task.isCancelled { return state.pushes }
                    state.waiters.append((id, count, continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting = state.withLockedValue { state in
                let index = state.waiters.firstIndex { $0.id == id }
                return index.map { (state.waiters.remove(at: $0).continuation, state.pushes) }
            }
            waiting?.0.resume(returning: waiting?.1 ?? [])
        }
    }

    /// A request as the server read it.
    struct Request {
        var method: String
        var path: String
        var headers: [String: String]
        var body: String
        var httpMajorVersion: Int
    }

    /// An answer to send.
    struct Response {
        var status: Int
        var headers: [String: String] = ["content-type": "application/json"]
        var body: String
    }

    func handle(_ request: Request) -> Response {
        if request.path == Self.tokenPath { return exchange(request) }
        if request.path.hasPrefix("/3/device/") { return apnsPush(request) }
        if request.path.hasPrefix("/v1/projects/") { return fcmPush(request) }
        return Response(status: 404, body: "{\"reason\":\"BadPath\"}")
    }

    // MARK: - APNs

    private func apnsPush(_ request: Request) -> Response {
        let token = String(request.path.dropFirst("/3/device/".count))
        func answer(_ status: Int, _ reason: String) -> Response {
            record(.apns, request, token: token, status: status, reason: reason)
            return Response(status: status, body: reason.isEmpty ? "" : "{\"reason\":\"\(reason)\"}")
        }
        guard request.method == "POST" else { return answer(405, "MethodNotAllowed") }
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit })
        else { return answer(400, "BadDeviceToken") }
        guard let apns else { return answer(403, "InvalidProviderToken") }
        let pushType = request.headers["apns-push-type"] ?? ""
        guard pushType == "voip" || pushType == "alert" else { return answer(400, "InvalidPushType") }
        let topic = request.headers["apns-topic"] ?? ""
        guard !topic.isEmpty else { return answer(400, "MissingTopic") }
        guard (pushType == "voip") == topic.hasSuffix(".voip") else { return answer(400, "TopicDisallowed") }
        guard let priority = request.headers["apns-priority"], priority == "10" || priority == "5" else {
            return answer(400, "BadPriority")
        }
        guard let expiration = request.headers["apns-expiration"], Int64(expiration) != nil else {
            return answer(400, "BadExpirationDate")
        }
        // The provider token: `bearer <jwt>`, ES256, our key id and team, young enough, not replaced too often.
        guard let authorization = request.headers["authorization"], authorization.hasPrefix("bearer ") else {
            return answer(403, "MissingProviderToken")
        }
        let jwt = String(authorization.dropFirst("bearer ".count))
        guard case .success(let check) = JWTCheck.verify(jwt, key: .es256(apns.publicKey)),
            check.header["kid"] as? String == apns.keyId, check.claims["iss"] as? String == apns.teamId,
            let iat = (check.claims["iat"] as? NSNumber)?.int64Value
        else { return answer(403, "InvalidProviderToken") }
        let nowSeconds = now() / 1000
        guard nowSeconds - iat < Self.providerTokenMaxAgeSeconds else { return answer(403, "ExpiredProviderToken") }
        let tooSoon: Bool = state.withLockedValue { state in
            if let last = state.providerTokens[apns.keyId], last.token != jwt {
                guard iat - last.iat >= Self.providerTokenMinUpdateSeconds else { return true }
            }
            if state.providerTokens[apns.keyId]?.token != jwt {
                state.providerTokens[apns.keyId] = (jwt, iat)
                state.providerTokenUpdates += 1
            }
            return false
        }
        guard !tooSoon else { return answer(429, "TooManyProviderTokenUpdates") }
        guard let payload = try? JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any],
            let call = payload["callapi"] as? [String: Any], Self.isCallObject(call)
        else { return answer(400, "BadPayload") }
        if pushType == "alert" {
            guard let aps = payload["aps"] as? [String: Any], aps["alert"] != nil, aps["sound"] is String else {
                return answer(400, "BadPayload")
            }
        }
        if let scripted = takeScripted(token) {
            switch scripted {
            case .unregistered: return answer(410, "Unregistered")
            case .badDeviceToken: return answer(400, "BadDeviceToken")
            case .tooManyRequests: return answer(429, "TooManyRequests")
            case .unavailable: return answer(503, "ServiceUnavailable")
            case .internalError: return answer(500, "InternalServerError")
            case .expiredProviderToken: return answer(403, "ExpiredProviderToken")
            }
        }
        if state.withLockedValue({ $0.unregistered.contains(token) }) { return answer(410, "Unregistered") }
        return answer(200, "")
    }

    /// Whether `call` is a `callapi` object as `SystemCallPush` reads it.
    static func isCallObject(_ call: [String: Any]) -> Bool {
        (call["v"] as? NSNumber)?.intValue == 1 && (call["callId"] as? String)?.isEmpty == false
            && call["callerId"] is NSNumber && call["video"] != nil && call["ringDeadline"] is NSNumber
    }

    // MARK: - FCM

    private func exchange(_ request: Request) -> Response {
        guard let fcm, request.method == "POST",
            request.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true
        else { return Response(status: 400, body: "{\"error\":\"invalid_request\"}") }
        var form: [String: String] = [:]
        for pair in request.body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"],
            case .success(let check) = JWTCheck.verify(assertion, key: .rs256(fcm.publicKey)),
            check.header["kid"] as? String == fcm.keyId, check.claims["iss"] as? String == fcm.clientEmail,
            (check.claims["scope"] as? String)?.contains("firebase.messaging") == true,
            (check.claims["aud"] as? String)?.hasSuffix(Self.tokenPath) == true,
            let exp = (check.claims["exp"] as? NSNumber)?.int64Value, exp > now() / 1000
        else { return Response(status: 400, body: "{\"error\":\"invalid_grant\"}") }
        let token: String = state.withLockedValue { state in
            state.exchanges += 1
            let token = "mock-access-\(state.exchanges)"
            state.accessTokens.insert(token)
            return token
        }
        return Response(
            status: 200, body: "{\"access_token\":\"\(token)\",\"expires_in\":3600,\"token_type\":\"Bearer\"}")
    }

    private func fcmPush(_ request: Request) -> Response {
        var token = ""
        func answer(_ status: Int, _ code: String) -> Response {
            record(.fcm, request, token: token, status: status, reason: code)
            if status == 200 {
                return Response(status: 200, body: "{\"name\":\"projects/p/messages/\(pushes.count)\"}")
            }
            let detail = code == "UNREGISTERED" ? "NOT_FOUND" : code
            return Response(
                status: status,
                body:
                    "{\"error\":{\"code\":\(status),\"status\":\"\(detail)\",\"details\":[{\"errorCode\":\"\(code)\"}]}}"
            )
        }
        guard let fcm, request.method == "POST", request.path == "/v1/projects/\(fcm.projectId)/messages:send" else {
            return answer(404, "NOT_FOUND")
        }
        guard let authorization = request.headers["authorization"], authorization.hasPrefix("Bearer "),
            state.withLockedValue({ $0.accessTokens.contains(String(authorization.dropFirst("Bearer ".count))) })
        else { return answer(401, "UNAUTHENTICATED") }
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any],
            let message = body["message"] as? [String: Any], let deviceToken = message["token"] as? String,
            let data = message["data"] as? [String: Any], let callText = data["callapi"] as? String,
            let call = try? JSONSerialization.jsonObject(with: Data(callText.utf8)) as? [String: Any],
            Self.isCallObject(call), data.values.allSatisfy({ $0 is String }),
            let android = message["android"] as? [String: Any], android["priority"] as? String == "high",
            let ttl = android["ttl"] as? String, ttl.hasSuffix("s"), Int(ttl.dropLast()) != nil
        else { return answer(400, "INVALID_ARGUMENT") }
        token = deviceToken
        if let scripted = takeScripted(token) {
            switch scripted {
            case .unregistered, .badDeviceToken: return answer(404, "UNREGISTERED")
            case .tooManyRequests: return answer(429, "QUOTA_EXCEEDED")
            case .unavailable: return answer(503, "UNAVAILABLE")
            case .internalError: return answer(500, "INTERNAL")
            case .expiredProviderToken: return answer(401, "UNAUTHENTICATED")
            }
        }
        if state.withLockedValue({ $0.unregistered.contains(token) }) { return answer(404, "UNREGISTERED") }
        return answer(200, "")
    }

    // MARK: - Recording

    private func takeScripted(_ token: String) -> MockAnswer? {
        state.withLockedValue { state in
            guard var list = state.scripted[token], !list.isEmpty else { return nil }
            let first = list.removeFirst()
            state.scripted[token] = list
            return first
        }
    }

    private func record(
        _ provider: RecordedPush.Provider, _ request: Request, token: String, status: Int, reason: String
    ) {
        let push = RecordedPush(
            provider: provider, path: request.path, headers: request.headers, body: request.body,
            deviceToken: token, status: status, reason: reason, receivedAt: now(),
            httpMajorVersion: request.httpMajorVersion)
        let ready: [(CheckedContinuation<[RecordedPush], Never>, [RecordedPush])] = state.withLockedValue { state in
            state.pushes.append(push)
            let due = state.waiters.filter { $0.count <= state.pushes.count }
            state.waiters.removeAll { $0.count <= state.pushes.count }
            return due.map { ($0.continuation, state.pushes) }
        }
        for (continuation, pushes) in ready { continuation.resume(returning: pushes) }
        if status == 200 {
            devices.deliver(MockDeviceInbox.devicePayload(provider: provider, body: request.body), to: token)
        }
    }
}
