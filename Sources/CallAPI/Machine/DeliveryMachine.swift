/// The acknowledgement and retry layer (ours, reliability.md): a nested machine the call machine owns.
///
/// It keeps our reliably sent call messages until the peer acknowledges them, retries them with backoff
/// within a bound, and learns which peers acknowledge at all. A peer whose messages lack the reliability
/// mark speaks wire format 1.0 only; the deployed 1.0 clients do not de-duplicate, so a message is never sent
/// twice to a peer not known to acknowledge (wire-format.md, "How the deployed clients treat repeats"),
/// and a peer is only retried once it has shown it acknowledges. It outlives a login so that what was learnt of
/// peers is kept; `stop()` forgets what was outstanding.
package struct DeliveryMachine: Sendable {
    /// The settings given at initialize.
    package private(set) var settings = CallReliability.standard
    /// Whether sends are tracked: from initialize until deinitialize.
    private var running = false
    /// Our reliably sent messages awaiting acknowledgement, in the order they were sent. A list searched by
    /// messageId: a call has a message or two outstanding at a time, and a dictionary hashed the id on every send
    /// and every acknowledgement.
    private var outstanding: [OutstandingMessage] = []
    /// What we learnt of each peer. Bounded.
    private var peers = PeerCapabilities()

    /// A message sent reliably and not yet acknowledged.
    struct OutstandingMessage: Sendable, Equatable {
        /// The message's messageId.
        let id: Int
        var message: CallMessage
        var to: UInt
        var firstSentAt: Int64
        var nextDelay: Int64
        var attempts = 0
    }

    /// Whether `peer` has shown it acknowledges (it runs this library's reliability extension).
    func acknowledges(_ peer: UInt) -> Bool { peers[peer] == true }

    /// The endpoint initialized with `settings`.
    mutating func start(_ settings: CallReliability) {
        self.settings = settings
        running = true
    }

    /// The endpoint deinitializes: nothing sent from now on is retried, nor anything outstanding.
    mutating func stop() {
        running = false
        outstanding = []
    }

    /// We sent `message` to `peer` for the first time: retry it until acknowledged, when the peer may
    /// acknowledge it.
    mutating func sent(_ message: CallMessage, to peer: UInt, now: Int64, into actions: inout [CallAction]) {
        guard running, settings.acknowledges, message.action.isCallFlow, message.reliable, peers[peer] == true,
            let id = message.messageId, index(of: id) == nil
        else { return }
        outstanding.append(
            OutstandingMessage(
                id: id, message: message, to: peer, firstSentAt: now, nextDelay: settings.firstRetryMillis))
        actions.append(.startTimer(.retry(messageId: id), millis: settings.firstRetryMillis))
    }

    /// Learns what a received message tells about its sender's client.
    mutating func received(_ message: CallMessage, from sender: UInt) {
        if message.reliable || message.action.isCallFlow {
            peers.learn(sender, acknowledges: message.reliable)
        }
    }

    /// `sender` acknowledged our message `id`.
    mutating func acknowledged(_ id: Int, by sender: UInt, into actions: inout [CallAction]) {
        guard let index = index(of: id), outstanding[index].to == sender else { return }
        outstanding.remove(at: index)
        actions.append(.stopTimer(.retry(messageId: id)))
    }

    /// The message the retry timer `id` is for, if it is still outstanding.
    func outstandingMessage(_ id: Int) -> CallMessage? { index(of: id).map { outstanding[$0].message } }

    /// The retry timer of message `id` fell due. `stillUseful` is the call machine's answer to whether the
    /// message still means something in the current call.
    mutating func retryDue(_ id: Int, stillUseful: Bool, now: Int64, into actions: inout [CallAction]) {
        guard let index = index(of: id) else { return }
        var entry = outstanding[index]
        let message = entry.message
        guard stillUseful, peers[entry.to] == true, now - entry.firstSentAt < settings.retryBoundMillis else {
            outstanding.remove(at: index)
            actions.append(.log(.normal, "stopped retrying \(message.action) \(id) of call \(message.callId)"))
            return
        }
        entry.attempts += 1
        entry.nextDelay = min(entry.nextDelay * 2, settings.maxRetryIntervalMillis)
        outstanding[index] = entry
        actions.append(
            .log(.normal, "retrying \(message.action) \(id) of call \(message.callId) (attempt \(entry.attempts + 1))"))
        actions.append(.send(message, to: entry.to, completesRequest: false))
        actions.append(.startTimer(.retry(messageId: id), millis: entry.nextDelay))
    }

    /// Whether a failed send is a retry (its failure is logged, not reported again).
    func isRetry(_ message: CallMessage) -> Bool {
        guard let id = message.messageId, let index = index(of: id) else { return false }
        return outstanding[index].attempts > 0
    }

    /// Where the message `id` is in ``outstanding``.
    private func index(of id: Int) -> Int? {
        outstanding.firstIndex { $0.id == id }
    }
}
