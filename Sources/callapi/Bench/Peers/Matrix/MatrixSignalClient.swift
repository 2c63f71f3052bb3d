import CallAPI
import Foundation

/// CallAPI's signaling seam over a Matrix homeserver: a message is a to-device event
/// (`PUT /_matrix/client/v3/sendToDevice/org.callapi.signal/{txnId}`, to all the recipient's devices), received
/// by a long-poll `/sync` loop (`since`, `timeout`).
///
/// `sendMessage`'s completion runs when the homeserver answers the PUT with 200 (it has stored the event).
/// Listeners get the authenticated `sender` of each event. When `ordered`, sends go out one at a time in call
/// order (CallAPI's flows expect a pair's messages in order; concurrent PUTs could overtake each other);
/// otherwise each send is its own request.
final class MatrixSignalClient: BenchPeerClient {
    static let eventType = "org.callapi.signal"
    /// The long-poll time of each `/sync`.
    static let pollMillis = 10_000
    /// Only to-device events: no rooms, presence or account data.
    static let filter = #"{"room":{"rooms":[]},"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#

    private typealias Job = @Sendable () async -> Void

    private struct Body: Encodable {
        var messages: [String: [String: [String: String]]]
    }

    let account: MatrixAccount
    private let http: MatrixHTTP
    private let listeners = Locked<[WeakSignalListener]>([])
    private let transactions = Locked(0)
    private let queue: AsyncStream<Job>.Continuation?
    private let tasks = Locked<[Task<Void, Never>]>([])

    private init(account: MatrixAccount, http: MatrixHTTP, ordered: Bool) {
        self.account = account
        self.http = http
        let queue = ordered ? AsyncStream<Job>.makeStream() : nil
        self.queue = queue?.continuation
        if let stream = queue?.stream {
            tasks.withLock { $0.append(Task { for await job in stream { await job() } }) }
        }
    }

    /// A client for `account`: it syncs once (so events sent from now on are the ones it waits for), then
    /// long-polls in the background until ``close()``.
    static func start(account: MatrixAccount, http: MatrixHTTP, ordered: Bool) async throws -> MatrixSignalClient {
        let client = MatrixSignalClient(account: account, http: http, ordered: ordered)
        let first = try await client.sync(since: nil, timeoutMillis: 0)
        client.deliver(first)
        let poll = Task { await client.poll(since: first.nextBatch) }
        client.tasks.withLock { $0.append(poll) }
        return client
    }

    private func sync(since: String?, timeoutMillis: Int) async throws -> MatrixSyncResponse {
        var query = "timeout=\(timeoutMillis)&set_presence=offline&filter="
        query += Self.filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        if let since {
            query += "&since=" + (since.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? since)
        }
        return try await http.call(
            .GET, "/_matrix/client/v3/sync?" + query, token: account.accessToken,
            timeout: .milliseconds(Int64(timeoutMillis) + 30_000), as: MatrixSyncResponse.self)
    }

    private func poll(since first: String) async {
        var since = first
        while !Task.isCancelled {
            do {
                let response = try await sync(since: since, timeoutMillis: Self.pollMillis)
                since = response.nextBatch
                deliver(response)
            } catch {
                if Task.isCancelled { return }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private func deliver(_ response: MatrixSyncResponse) {
        guard let events = response.toDevice?.events, !events.isEmpty else { return }
        let listeners = listeners.withLock { $0.compactMap(\.listener) }
        for event in events where event.type == Self.eventType {
            guard let body = event.content.body else { continue }
            let sender = SignalSender(userId: MatrixAccount.benchUser(of: event.sender) ?? event.sender)
            for listener in listeners { listener.onMessageReceive(message: body, from: sender) }
        }
    }

    private func send(to user: String, message: String) async throws {
        let transaction = transactions.withLock {
            $0 += 1
            return $0
        }
        let target = MatrixAccount.matrixId(of: user, serverName: account.serverName)
        let path = "/_matrix/client/v3/sendToDevice/\(Self.eventType)/\(account.deviceId)-\(transaction)"
        _ = try await http.call(
            .PUT, path, body: Body(messages: [target: ["*": ["body": message]]]), token: account.accessToken,
            as: MatrixEmptyAnswer.self)
    }

    // MARK: - ISignalClient

    func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        let job: Job = { [self] in
            do {
                try await send(to: userId, message: message)
                completion?(nil)
            } catch {
                completion?(error)
            }
        }
        if let queue {
            queue.yield(job)
        } else {
            Task { await job() }
        }
    }

    func addListener(listener: any ISignalClientListener) {
        listeners.withLock { listeners in
            listeners.removeAll { $0.listener == nil || $0.listener === listener }
            listeners.append(WeakSignalListener(listener: listener))
        }
    }

    func removeListener(listener: any ISignalClientListener) {
        listeners.withLock { $0.removeAll { $0.listener == nil || $0.listener === listener } }
    }

    // MARK: - BenchPeerClient

    /// Stops the sync loop and the send queue.
    func close() async {
        queue?.finish()
        let tasks = tasks.withLock { $0 }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
