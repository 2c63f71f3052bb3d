import CallAPI
import CallAPISignalProtocol
import Logging

/// Places the calls the signaling server asks for through CallAPI, as if the user had tapped call, and (if the
/// app opts in) accepts the calls the match queue made for this user (docs/match.md).
///
/// ```swift
/// let signal = SignalClient(configuration: .init(url: "ws://127.0.0.1:8080"))
/// let api = CallApiImpl()
/// let agent = ServerCallAgent(signal: signal, api: api, autoAcceptsMatchedCalls: true)
/// try await signal.login(token: token)
/// // initialize and prepare `api` as usual, then:
/// try await signal.enterMatchQueue(tags: ["paris", "chess"])
/// ```
///
/// Make it before logging in, so that no request of the server comes before it listens. A placed call uses the
/// server's call id (the one `POST /v1/calls` answered, or the match's) and carries `placedBy` (and `matchId`)
/// in its call extension. Auto-accept takes only an incoming call whose id and caller are those of a `matched`
/// frame from the server for this user, so no other user can make this client accept a call.
public final class ServerCallAgent: Sendable {
    private let tasks: [Task<Void, Never>]

    /// Starts listening to `signal`'s events and `api`'s state.
    ///
    /// - Parameters:
    ///   - signal: the client of the server (the same one CallAPI uses as its signaling channel).
    ///   - api: the CallAPI endpoint that places and accepts the calls.
    ///   - autoAcceptsMatchedCalls: accept, as callee, the calls of this user's matches.
    public init(
        signal: SignalClient, api: CallApiImpl, autoAcceptsMatchedCalls: Bool = false,
        logger: Logger = Logger(label: "callapi.server-calls")
    ) {
        let book = MatchedCallBookBox()
        let events = signal.events()
        let changes = api.stateChanges
        var tasks = [
            Task {
                for await event in events {
                    switch event {
                    case .callPlaced(let order):
                        Self.place(order, with: api, logger: logger)
                    case .matched(let match) where autoAcceptsMatchedCalls:
                        if let peer = await book.matched(match) { Self.accept(peer, with: api, logger: logger) }
                    default:
                        break
                    }
                }
            }
        ]
        if autoAcceptsMatchedCalls {
            tasks.append(
                Task {
                    for await change in changes {
                        if let peer = await book.stateChanged(change) { Self.accept(peer, with: api, logger: logger) }
                    }
                })
        }
        self.tasks = tasks
    }

    deinit { stop() }

    /// Stops placing and accepting.
    public func stop() {
        for task in tasks { task.cancel() }
    }

    /// Places `order` through `api` as the agent does (`callapi phone` calls it itself, after printing the order).
    package static func place(_ order: ServerPlacedCall, with api: CallApiImpl, logger: Logger) {
        guard let callee = UInt(order.calleeId) else {
            logger.warning(
                "the server asked for a call to a user id CallAPI cannot call",
                metadata: ["callee": "\(order.calleeId)"])
            return
        }
        var ext: [String: JSONValue] = ["placedBy": .string("server")]
        if let matchId = order.matchId { ext["matchId"] = .string(matchId) }
        if let tag = order.tag { ext["matchTag"] = .string(tag) }
        api.call(
            remoteUserId: callee, callType: order.video ? .video : .audio, callExtension: ext, callId: order.callId
        ) { error in
            if let error {
                logger.warning(
                    "a call the server asked for could not be placed",
                    metadata: ["call": "\(order.callId)", "error": "\(error)"])
            }
        }
    }

    private static func accept(_ peer: String, with api: CallApiImpl, logger: Logger) {
        guard let caller = UInt(peer) else { return }
        logger.info("accepting a matched call", metadata: ["caller": "\(peer)"])
        api.accept(remoteUserId: caller) { error in
            if let error { logger.warning("a matched call could not be accepted", metadata: ["error": "\(error)"]) }
        }
    }
}

/// The agent's ``MatchedCallBook``, shared by its two listening tasks.
private actor MatchedCallBookBox {
    private var book = MatchedCallBook()
    func matched(_ match: MatchFound) -> String? { book.matched(match) }
    func stateChanged(_ change: CallStateChange) -> String? { book.stateChanged(change) }
}
