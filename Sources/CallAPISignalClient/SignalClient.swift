import CallAPI
import CallAPISignalProtocol
import Logging
import NIOCore
import NIOPosix

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The client of `callapi serve`, and CallAPI's signaling channel (``ISignalClient``).
///
/// ```swift
/// let signal = SignalClient(configuration: .init(url: "ws://127.0.0.1:8080"))
/// try await signal.login(token: token)
/// let api = CallApiImpl()
/// api.initialize(config: CallConfig(userId: 1001, rtcEngine: engine, signalClient: signal))
/// ```
///
/// It reconnects by itself with exponential backoff and jitter. A message sent while it reconnects is sent once it
/// is back, or fails with a clear error after ``SignalClientConfiguration/sendQueueTimeoutMillis``; none vanish.
/// Received messages reach CallAPI with the sender id the server authenticated, so a forged `fromUserId` in a body
/// is caught.
public final class SignalClient: ISignalClient {
    public let configuration: SignalClientConfiguration
    /// Calls from the synchronous API, in order, on the core's event loop.
    private let commands: LoopCommands<ClientCore>
    /// The client's clock, milliseconds since 1970: what ``clockOffset`` is measured against, and what a
    /// ``CallReporter`` stamps its marks with.
    package let now: @Sendable () -> Int64

    /// A client for the server at ``SignalClientConfiguration/url``. Nothing happens until ``login(token:)``.
    public convenience init(
        configuration: SignalClientConfiguration, logger: Logger = Logger(label: "callapi.signal")
    ) {
        self.init(configuration: configuration, logger: logger) {
            Int64((Date().timeIntervalSince1970 * 1000).rounded())
        }
    }

    /// A client whose clock is `now` (milliseconds since 1970): tests give one that is off the server's.
    package init(
        configuration: SignalClientConfiguration, logger: Logger, now: @escaping @Sendable () -> Int64
    ) {
        self.configuration = configuration
        self.now = now
        let loop = configuration.eventLoopGroup.any()
        let core = ClientCore(
            configuration: configuration, loop: loop, logger: logger, now: now, jitter: { Double.random(in: 0...1) })
        commands = LoopCommands(core, on: loop)
    }

    deinit {
        commands.yield { $0.shutdown() }
    }

    // MARK: - Session

    /// Connects and logs in; returns once logged in. Throws ``SignalClientError/stopped(_:)`` if the server refuses
    /// the token, or after ``SignalClientConfiguration/loginTimeoutMillis`` without a connection.
    public func login(token: String) async throws {
        let timer = commands.schedule(in: .milliseconds(configuration.loginTimeoutMillis)) { $0.loginTimedOut() }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            commands.yield { $0.login(token: token, waiter: waiter) }
        }
    }

    /// Logs out and closes the connection; pending sends fail with ``SignalClientError/stopped(_:)``.
    public func logout() {
        commands.yield { $0.logout() }
    }

    /// Replaces the token, on the open connection if there is one (else for the next login). Returns the new
    /// expiry in milliseconds since 1970 (0 if not connected).
    @discardableResult
    public func renewToken(_ token: String) async throws -> Int64 {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield { $0.renew(token: token) { waiter.resume(with: $0) } }
        }
    }

    /// The connection state now.
    public var state: SignalConnectionState {
        get async { (try? await commands.ask { $0.state }) ?? .idle }
    }

    /// How far the server's clock is from this device's, estimated from the login's round trip and each ping's
    /// since (``ClockOffset``); `nil` before the first login. Put a local time on the server's clock with
    /// ``ClockOffset/serverTime(ofLocal:)``, so that two devices' times can be compared.
    public var clockOffset: ClockOffset? {
        get async { (try? await commands.ask { $0.clockOffset }) ?? nil }
    }

    /// The connection states from now on, starting with the current one.
    public func stateUpdates() -> AsyncStream<SignalConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: SignalConnectionState.self)
        commands.yield { $0.observeStates(continuation) }
        return stream
    }

    /// Messages, presence changes, token notices and held-message results from now on.
    public func events() -> AsyncStream<SignalClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SignalClientEvent.self)
        commands.yield { $0.observeEvents(continuation) }
        return stream
    }

    /// Adds a connection listener (held weakly).
    public func addConnectionListener(_ listener: any SignalConnectionListener) {
        commands.yield { $0.addConnectionListener(listener) }
    }

    /// Removes a connection listener.
    public func removeConnectionListener(_ listener: any SignalConnectionListener) {
        commands.yield { $0.removeConnectionListener(listener) }
    }

    // MARK: - Messages and presence

    /// Sends `body` to `userId`; `ttl` seconds > 0 lets the server hold it while the user is offline.
    public func send(to userId: String, body: String, ttl: Int = 0) async throws -> SendOutcome {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield {
                $0.send(to: userId, body: body, ttl: ttl, completion: .outcome { waiter.resume(with: $0) })
            }
        }
    }

    /// The users online now.
    public func onlineUsers() async throws -> [String] {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield { $0.presence(subscribe: false) { waiter.resume(with: $0) } }
        }
    }

    /// The users online now; from now on ``events()`` also reports who comes and goes (kept across reconnects).
    @discardableResult
    public func subscribePresence() async throws -> [String] {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield { $0.presence(subscribe: true) { waiter.resume(with: $0) } }
        }
    }

    // MARK: - Call reports

    /// Sends what this device saw of a call to the server's ledger, which merges it with the other side's onto one
    /// time line (docs/timeline.md); returns once the server kept it. ``CallReporter`` builds and sends it for a
    /// CallAPI endpoint.
    public func report(_ report: CallReport) async throws {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            commands.yield {
                $0.report(report) { error in
                    if let error { waiter.resume(throwing: error) } else { waiter.resume() }
                }
            }
        }
    }

    // MARK: - Call history

    /// A page of this user's calls from the server's call ledger, newest first (docs/ledger.md).
    ///
    /// - Parameters:
    ///   - missedOnly: only calls this user missed as callee (missed, cancelled while ringing, busy).
    ///   - since: only calls started at or after this time (ms since 1970, server clock).
    ///   - limit: at most this many, 1 to 200.
    ///   - cursor: ``CallHistoryPage/nextCursor`` of the previous page.
    public func callHistory(missedOnly: Bool = false, since: Int64? = nil, limit: Int = 50, cursor: String? = nil)
        async throws -> CallHistoryPage
    {
        let request = ClientFrame.CallsRequest(
            missed: missedOnly ? true : nil, since: since, limit: limit, cursor: cursor)
        let page = try await withCheckedThrowingContinuation { waiter in
            commands.yield { $0.calls(request) { waiter.resume(with: $0) } }
        }
        return CallHistoryPage(calls: page.calls, nextCursor: page.nextCursor)
    }

    // MARK: - Invitations

    /// Invites `calleeId` (Agora RTM v1's `sendLocalInvitation`, docs/invitations.md). Returns once the server
    /// has the invitation: in ``LocalInvitationState/sentToRemote``, or already in
    /// ``LocalInvitationState/failure(_:)`` with ``LocalInvitationFailure/peerOffline`` when the callee is offline.
    /// What happens next comes from ``invitationEvents()``.
    ///
    /// The invitation belongs to this connection's session: if the connection is lost it fails with
    /// ``LocalInvitationFailure/notLoggedIn`` (and the callee is told).
    ///
    /// - Parameters:
    ///   - calleeId: the user to invite.
    ///   - content: what to tell the callee, up to 8 KB of UTF-8.
    ///   - channelId: the channel the call would use, up to 64 characters.
    /// - Throws: ``InvitationApiCallError``.
    public func sendInvitation(to calleeId: String, content: String = "", channelId: String = "") async throws
        -> LocalInvitation
    {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield {
                $0.invitation(
                    .send(to: calleeId, content: content, channelId: channelId),
                    waiter: .sent(content: content, channelId: channelId) { waiter.resume(with: $0) })
            }
        }
    }

    /// Cancels an invitation this client sent (RTM v1's `cancelLocalInvitation`); returns it
    /// ``LocalInvitationState/canceled``, and the callee is told.
    ///
    /// - Throws: ``InvitationApiCallError/alreadyAccept(_:)`` once the callee accepted,
    ///   ``InvitationApiCallError/alreadyEnd(_:)`` when it is over.
    @discardableResult
    public func cancelInvitation(_ invitation: LocalInvitation) async throws -> LocalInvitation {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield {
                $0.invitation(
                    .cancel(invitationId: invitation.invitationId), waiter: .local { waiter.resume(with: $0) })
            }
        }
    }

    /// Accepts an invitation to this user with `response` for the caller (RTM v1's `acceptRemoteInvitation`);
    /// returns it ``RemoteInvitationState/acceptSentToLocal``. The accept is final when
    /// ``InvitationEvent/remoteInvitationAccepted(_:)`` follows (the caller acknowledged), or fails with
    /// ``RemoteInvitationFailure/acceptFailure``.
    ///
    /// - Throws: ``InvitationApiCallError``.
    @discardableResult
    public func acceptInvitation(_ invitation: RemoteInvitation, response: String = "") async throws
        -> RemoteInvitation
    {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield {
                $0.invitation(
                    .accept(invitationId: invitation.invitationId, response: response),
                    waiter: .remote { waiter.resume(with: $0) })
            }
        }
    }

    /// Refuses an invitation to this user with `response` for the caller (RTM v1's `refuseRemoteInvitation`);
    /// returns it ``RemoteInvitationState/refused``. The user's other devices are told too.
    ///
    /// - Throws: ``InvitationApiCallError``.
    @discardableResult
    public func refuseInvitation(_ invitation: RemoteInvitation, response: String = "") async throws
        -> RemoteInvitation
    {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield {
                $0.invitation(
                    .refuse(invitationId: invitation.invitationId, response: response),
                    waiter: .remote { waiter.resume(with: $0) })
            }
        }
    }

    /// What happens to this client's invitations from now on, sent and received (RTM v1's
    /// `RtmCallEventListener`).
    public func invitationEvents() -> AsyncStream<InvitationEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: InvitationEvent.self)
        commands.yield { $0.observeInvitations(continuation) }
        return stream
    }

    // MARK: - Match queue

    /// Waits in the server's match queue with `tags` (docs/match.md); returns the tags once the server has the
    /// entry. When a user sharing a tag is found, ``events()`` reports ``SignalClientEvent/matched(_:)`` and the
    /// server places a call between the two (a ``ServerCallAgent`` places and, if asked, accepts it). Entering
    /// again replaces the tags and keeps the place in line. The entry belongs to this connection: it ends if the
    /// connection is lost (enter again once reconnected).
    ///
    /// - Parameter tags: 1 to 8 tags of 1 to 64 bytes (a city, an interest), most wanted first.
    /// - Throws: ``SignalClientError/refused(_:_:)`` with `invalid_frame` for bad tags, `match_queue_full` when the
    ///   queue is full.
    @discardableResult
    public func enterMatchQueue(tags: [String]) async throws -> [String] {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield { $0.match(.enter(tags: tags)) { waiter.resume(with: $0) } }
        }
    }

    /// Leaves the match queue (a no-op when this user is not waiting).
    public func leaveMatchQueue() async throws {
        _ = try await withCheckedThrowingContinuation { waiter in
            commands.yield { $0.match(.leave) { waiter.resume(with: $0) } }
        }
    }

    // MARK: - Push devices

    /// Registers (or replaces, by ``PushDevice/deviceId``) this user's device for call pushes; returns the user's
    /// devices. Throws ``SignalClientError/refused(_:_:)`` when the server finds the credentials unusable.
    @discardableResult
    public func registerDevice(_ device: PushDevice) async throws -> [PushDeviceSummary] {
        try await deviceRequest(.register(device))
    }

    /// This user's registered devices.
    public func devices() async throws -> [PushDeviceSummary] {
        try await deviceRequest(.list)
    }

    /// Removes one of this user's devices; returns the remaining ones.
    @discardableResult
    public func removeDevice(deviceId: String) async throws -> [PushDeviceSummary] {
        try await deviceRequest(.remove(deviceId: deviceId))
    }

    private func deviceRequest(_ request: DeviceRequest) async throws -> [PushDeviceSummary] {
        try await withCheckedThrowingContinuation { waiter in
            commands.yield { $0.devices(request) { waiter.resume(with: $0) } }
        }
    }

    // MARK: - ISignalClient

    public func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        let ttl = configuration.messageTTLSeconds
        // Calls, cancels, accepts and rejects are marked, so the server can push a call to a user's devices and
        // withdraw it.
        let copy = configuration.copiesToOwnSessions
        let push = CallPushMarking.mark(forCallAPIMessage: message)
        commands.yield {
            $0.send(to: userId, body: message, ttl: ttl, push: push, copy: copy, completion: .error(completion))
        }
    }

    /// Starts delivering received messages to `listener` (held weakly). Messages that arrived while the client had
    /// no listener (an app logs in, then initializes CallAPI) are delivered to the first one added, oldest first
    /// (``SignalMessageListeners``).
    public func addListener(listener: any ISignalClientListener) {
        commands.yield { $0.addListener(listener) }
    }

    public func removeListener(listener: any ISignalClientListener) {
        commands.yield { $0.removeListener(listener) }
    }
}
