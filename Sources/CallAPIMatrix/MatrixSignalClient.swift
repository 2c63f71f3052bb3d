import AsyncHTTPClient
import CallAPI
import Foundation
import NIOCore

/// CallAPI's signaling seam over a Matrix homeserver (Synapse, Dendrite, Conduit, …): a message is a to-device
/// event (`PUT /_matrix/client/v3/sendToDevice/org.callapi.signal/{txnId}`, to all the recipient's devices),
/// received by a long-poll `/sync` loop.
///
/// The shape is the seeds' IM-backed signal client: ``login(account:since:tokenExpiresAt:)``, ``logout()``,
/// ``renewToken(_:expiresAt:)`` and an ``ISignalConnectionListener``. `sendMessage`'s completion runs when
/// the homeserver answers the PUT with 200 (it has stored the event). The homeserver vouches for each event's
/// `sender`, so listeners get ``ISignalClientListener/onMessageReceive(message:from:)`` and CallAPI trusts
/// that id over the body's.
///
/// When a `/sync` fails the listeners hear ``ISignalConnectionListener/onDisconnected(error:)`` and the loop
/// retries with the same `since` token (``syncToken``), so nothing sent meanwhile is missed; the first sync
/// that works again brings ``ISignalConnectionListener/onConnected()``. A 401 also calls
/// ``ISignalConnectionListener/onTokenPrivilegeWillExpire()``: renew the access token.
public final class MatrixSignalClient: ISignalClient {
    /// Where the homeserver is and how the client behaves.
    public struct Configuration: Sendable {
        /// `http(s)://host:port`, without a trailing slash.
        public var baseURL: String
        /// The to-device event type carrying CallAPI messages.
        public var eventType = "org.callapi.signal"
        /// The long-poll time of each `/sync`.
        public var pollTimeoutMillis = 10_000
        /// Waits before each retry of a failed `/sync`; the last repeats.
        public var retryDelaysMillis: [Int64] = [100, 250, 500, 1_000, 2_000]
        /// Sends go out one at a time in call order (CallAPI's flows expect a pair's messages in order;
        /// concurrent PUTs could overtake each other). Off: each send is its own request at once.
        public var orderedSends = true
        /// The most sends that may wait for their turn when ordered; more fail at once.
        public var maxQueuedSends = 256
        /// How long before the token's expiry ``ISignalConnectionListener/onTokenPrivilegeWillExpire()``
        /// is called.
        public var tokenWillExpireLeadSeconds: Double = 30

        public init(baseURL: String) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        }
    }

    /// Only to-device events: no rooms, presence or account data.
    static let filter = #"{"room":{"rooms":[]},"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#

    private typealias Job = @Sendable () async -> Void

    private struct Body: Encodable {
        var messages: [String: [String: [String: String]]]
    }

    private struct Session {
        var account: MatrixAccount
        var since: String?
        var login: Int
        var tasks: [Task<Void, Never>] = []
        var queue: AsyncStream<Job>.Continuation?
        var queued = 0
        var connected = true
    }

    private struct State {
        var session: Session?
        /// Kept after logout, so a later login of the same account resumes where it stopped.
        var since: String?
        var logins = 0
        var transactions = 0
        var listeners = SignalAdapterListeners()
    }

    public let configuration: Configuration
    private let http: MatrixHTTP
    private let state = Locked(State())
    /// Who hears received messages; what arrives before CallAPI adds its listener is kept for it.
    private let messageListeners = SignalMessageListeners()
    private let alarm = TokenExpiryAlarm()
    /// Makes transaction ids unique across clients of one device (the homeserver deduplicates by them).
    private let nonce = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    /// `httpClient` carries every request; its pool should allow a long poll beside the sends.
    public init(configuration: Configuration, httpClient: HTTPClient = .shared) {
        self.configuration = configuration
        http = MatrixHTTP(http: httpClient, baseURL: configuration.baseURL)
    }

    /// The `/sync` position: events after it have not been delivered yet.
    public var syncToken: String? { state.withLock { $0.session?.since ?? $0.since } }

    /// The logged-in account, if any.
    public var account: MatrixAccount? { state.withLock { $0.session?.account } }

    /// Starts receiving as `account`: one `/sync` that must succeed (from `since`, or from where this client
    /// stopped, or from the start), then a long-poll loop in the background until ``logout()``. Tells the
    /// connection listeners ``ISignalConnectionListener/onConnected()``.
    public func login(account: MatrixAccount, since: String? = nil, tokenExpiresAt: Date? = nil) async throws {
        let login: Int? = state.withLock { state in
            guard state.session == nil else { return nil }
            state.logins += 1
            state.session = Session(account: account, since: since ?? state.since, login: state.logins)
            return state.logins
        }
        guard let login else { throw MatrixClientError.alreadyLoggedIn }
        let first: MatrixSyncResponse
        do {
            first = try await sync(since: since ?? syncToken, timeoutMillis: 0, token: account.accessToken)
        } catch {
            state.withLock { if $0.session?.login == login { $0.session = nil } }
            throw error
        }
        let queue = configuration.orderedSends ? AsyncStream<Job>.makeStream() : nil
        let started = state.withLock { state in
            guard state.session?.login == login else { return false }
            state.session?.since = first.nextBatch
            state.session?.queue = queue?.continuation
            if let stream = queue?.stream {
                state.session?.tasks.append(Task { for await job in stream { await job() } })
            }
            state.session?.tasks.append(Task { [weak self] in await self?.poll(login: login) })
            return true
        }
        guard started else { throw MatrixClientError.notLoggedIn }
        alarm.set(expiresAt: tokenExpiresAt, leadSeconds: configuration.tokenWillExpireLeadSeconds) { [weak self] in
            self?.tokenWillExpire()
        }
        deliver(first)
        for listener in connectionListeners { listener.onConnected() }
    }

    /// Stops the sync loop and the sends waiting their turn (their completions get
    /// ``MatrixClientError/notLoggedIn``); keeps ``syncToken``. The access token stays valid: revoke it with
    /// the homeserver's `/logout` if the device is done for good.
    public func logout() async {
        alarm.cancel()
        let session: Session? = state.withLock { state in
            defer { state.session = nil }
            if let since = state.session?.since { state.since = since }
            return state.session
        }
        guard let session else { return }
        session.queue?.finish()
        for task in session.tasks { task.cancel() }
        for task in session.tasks { await task.value }
    }

    /// A new access token, used from the next request on. `expiresAt` re-arms
    /// ``ISignalConnectionListener/onTokenPrivilegeWillExpire()``.
    public func renewToken(_ accessToken: String, expiresAt: Date? = nil) {
        state.withLock { $0.session?.account.accessToken = accessToken }
        alarm.set(expiresAt: expiresAt, leadSeconds: configuration.tokenWillExpireLeadSeconds) { [weak self] in
            self?.tokenWillExpire()
        }
    }

    public func addConnectionListener(_ listener: any ISignalConnectionListener) {
        state.withLock { $0.listeners.add(listener) }
    }

    public func removeConnectionListener(_ listener: any ISignalConnectionListener) {
        state.withLock { $0.listeners.remove(listener) }
    }

    // MARK: - ISignalClient

    public func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        let job: Job = { [weak self] in
            guard let self else {
                completion?(MatrixClientError.notLoggedIn)
                return
            }
            do {
                try await self.send(to: userId, message: message)
                completion?(nil)
            } catch {
                completion?(error)
            }
        }
        enum Route {
            case refuse(MatrixClientError)
            case queue(AsyncStream<Job>.Continuation)
            case now
        }
        let limit = configuration.maxQueuedSends
        let route: Route = state.withLock { state in
            guard let session = state.session else { return .refuse(.notLoggedIn) }
            guard let queue = session.queue else { return .now }
            guard session.queued < limit else { return .refuse(.tooManyQueuedSends(limit)) }
            state.session?.queued += 1
            return .queue(queue)
        }
        switch route {
        case .refuse(let error):
            completion?(error)
        case .now:
            Task { await job() }
        case .queue(let queue):
            let counted: Job = { [weak self] in
                self?.state.withLock { $0.session?.queued -= 1 }
                await job()
            }
            if case .terminated = queue.yield(counted) { completion?(MatrixClientError.notLoggedIn) }
        }
    }

    public func addListener(listener: any ISignalClientListener) {
        messageListeners.add(listener)
    }

    public func removeListener(listener: any ISignalClientListener) {
        messageListeners.remove(listener)
    }

    // MARK: - Sync loop and sends

    private var connectionListeners: [any ISignalConnectionListener] {
        state.withLock { $0.listeners.connectionListeners }
    }

    private func tokenWillExpire() {
        for listener in connectionListeners { listener.onTokenPrivilegeWillExpire() }
    }

    private func sync(since: String?, timeoutMillis: Int, token: String) async throws -> MatrixSyncResponse {
        var query = "timeout=\(timeoutMillis)&set_presence=offline&filter="
        query += Self.filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        if let since {
            query += "&since=" + (since.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? since)
        }
        return try await http.call(
            .GET, "/_matrix/client/v3/sync?" + query, token: token,
            timeout: .milliseconds(Int64(timeoutMillis) + 30_000), as: MatrixSyncResponse.self)
    }

    private func poll(login: Int) async {
        var failures = 0
        while !Task.isCancelled {
            let current: (since: String?, token: String)? = state.withLock { state in
                state.session.flatMap { $0.login == login ? ($0.since, $0.account.accessToken) : nil }
            }
            guard let current else { return }
            do {
                let response = try await sync(
                    since: current.since, timeoutMillis: configuration.pollTimeoutMillis, token: current.token)
                let current = state.withLock { state in
                    guard state.session?.login == login else { return false }
                    state.session?.since = response.nextBatch
                    return true
                }
                guard current else { return }
                deliver(response)
                if failures > 0 {
                    failures = 0
                    for listener in connectionListeners { listener.onConnected() }
                }
            } catch {
                if Task.isCancelled { return }
                failures += 1
                if failures == 1 {
                    for listener in connectionListeners { listener.onDisconnected(error: error) }
                }
                if (error as? MatrixClientError)?.isUnauthorized == true { tokenWillExpire() }
                let delays = configuration.retryDelaysMillis
                let delay = delays.isEmpty ? 1_000 : delays[min(failures - 1, delays.count - 1)]
                try? await Task.sleep(for: .milliseconds(delay))
            }
        }
    }

    private func deliver(_ response: MatrixSyncResponse) {
        guard let events = response.toDevice?.events, !events.isEmpty else { return }
        for event in events where event.type == configuration.eventType {
            guard let body = event.content.body else { continue }
            messageListeners.deliver(
                body, from: SignalSender(userId: MatrixAccount.callUser(of: event.sender) ?? event.sender))
        }
    }

    private func send(to user: String, message: String) async throws {
        let (account, transaction): (MatrixAccount?, Int) = state.withLock { state in
            state.transactions += 1
            return (state.session?.account, state.transactions)
        }
        guard let account else { throw MatrixClientError.notLoggedIn }
        let target = MatrixAccount.matrixId(of: user, serverName: account.serverName)
        let path =
            "/_matrix/client/v3/sendToDevice/\(configuration.eventType)/\(account.deviceId)-\(nonce)-\(transaction)"
        _ = try await http.call(
            .PUT, path, body: Body(messages: [target: ["*": ["body": message]]]), token: account.accessToken,
            as: MatrixEmptyAnswer.self)
    }

}
