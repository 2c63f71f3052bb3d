import CallAPI

/// A signaling channel inside one process, for tests and demos: `client(userId:)` gives each user an
/// `ISignalClient`, and the network can delay, hold, drop or duplicate what they send.
///
/// Messages are delivered after ``latencyMillis`` on the network's clock (at once when 0). The network
/// vouches for senders (it knows which client sent what) unless ``vouchesForSender`` is false.
///
/// A user may have several devices (``addDevice(userId:)``): a message to the user reaches every one of them,
/// and, as our server does, what one device sends is copied to the user's other devices unless
/// ``copiesToOwnDevices`` is false (a channel that cannot, where the caller's messages must be enough). A
/// message a device sends to its own user reaches that user's other devices (a send fails when there are none).
public final class InMemorySignalNetwork: Sendable {
    /// What to do with a message in flight.
    public enum Fault: Sendable, Equatable {
        /// Lose it; the sender is told it was sent.
        case drop
        /// Deliver it twice.
        case duplicate
        /// Keep it until ``releaseHeld()``.
        case hold
        /// Deliver it this much later than the latency says (so later messages may overtake it).
        case delay(Int64)
    }

    /// A message sent through the network.
    public struct Envelope: Sendable, Equatable {
        public var from: UInt
        public var to: UInt
        public var text: String
        public var sentAtMillis: Int64
        /// Which of the sender's devices sent it (0: the first, ``InMemorySignalNetwork/client(userId:)``).
        public var fromDevice: Int
    }

    private struct Rule: Sendable {
        var fault: Fault
        var remaining: Int
        var from: UInt?
        var to: UInt?
    }

    private struct State: Sendable {
        /// Each user's devices, the first one being ``client(userId:)``.
        var clients: [UInt: [InMemorySignalClient]] = [:]
        var copiesToOwnDevices = true
        var offline: Set<UInt> = []
        var rules: [Rule] = []
        var held: [Envelope] = []
        var sent: [Envelope] = []
        var latencyMillis: Int64 = 0
        var vouchesForSender = true
        var faultPolicy: (@Sendable (Envelope) -> Fault?)?
        var partitions: Set<Pair> = []
    }

    private struct Pair: Hashable, Sendable {
        var a: UInt
        var b: UInt
        init(_ x: UInt, _ y: UInt) { (a, b) = (min(x, y), max(x, y)) }
    }

    private let state = Locked(State())
    public let clock: any CallClock

    public init(clock: any CallClock, latencyMillis: Int64 = 0) {
        self.clock = clock
        state.withLock { $0.latencyMillis = latencyMillis }
    }

    /// The client of `userId` (the same one each time): its first device.
    public func client(userId: UInt) -> InMemorySignalClient {
        state.withLock { state in
            if let existing = state.clients[userId]?.first { return existing }
            let client = InMemorySignalClient(userId: userId, device: 0, network: self)
            state.clients[userId] = [client]
            return client
        }
    }

    /// A new device of `userId`, logged in beside its others: messages to the user reach it too.
    public func addDevice(userId: UInt) -> InMemorySignalClient {
        state.withLock { state in
            let devices = state.clients[userId] ?? []
            let client = InMemorySignalClient(userId: userId, device: devices.count, network: self)
            state.clients[userId] = devices + [client]
            return client
        }
    }

    /// Whether what a device sends is also handed to its user's other devices (as our server does).
    public var copiesToOwnDevices: Bool {
        get { state.withLock { $0.copiesToOwnDevices } }
        set { state.withLock { $0.copiesToOwnDevices = newValue } }
    }

    /// One-way delay of every message.
    public var latencyMillis: Int64 {
        get { state.withLock { $0.latencyMillis } }
        set { state.withLock { $0.latencyMillis = newValue } }
    }

    /// Whether receivers are told who sent each message (as an authenticating server would).
    public var vouchesForSender: Bool {
        get { state.withLock { $0.vouchesForSender } }
        set { state.withLock { $0.vouchesForSender = newValue } }
    }

    /// Every message sent so far, in order, whatever became of it.
    public var sentMessages: [Envelope] { state.withLock { $0.sent } }

    /// Messages kept by a ``Fault/hold`` rule.
    public var heldMessages: [Envelope] { state.withLock { $0.held } }

    /// Applies `fault` to the next `count` messages matching `from` and `to` (nil matches anyone).
    public func inject(_ fault: Fault, count: Int = 1, from: UInt? = nil, to: UInt? = nil) {
        state.withLock { $0.rules.append(Rule(fault: fault, remaining: count, from: from, to: to)) }
    }

    /// Decides a fault for every message (after the injected rules); for randomized fault injection.
    public func setFaultPolicy(_ policy: (@Sendable (Envelope) -> Fault?)?) {
        state.withLock { $0.faultPolicy = policy }
    }

    /// Delivers the held messages, in the order they were sent.
    public func releaseHeld() {
        let held = state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
        held.forEach(deliverNow)
    }

    /// Cuts the path between `a` and `b` both ways: what they send each other is lost until ``heal()``.
    public func partition(_ a: UInt, _ b: UInt) {
        state.withLock { _ = $0.partitions.insert(Pair(a, b)) }
    }

    /// Restores every cut path.
    public func heal() {
        state.withLock { $0.partitions = [] }
    }

    /// Hands `text` to `userId` at once, as if `from` had sent it (the network vouches for `from`): for
    /// injecting forged or stale messages.
    public func inject(text: String, from: UInt, to userId: UInt, receivedAtMillis: Int64? = nil) {
        let targets = state.withLock { $0.clients[userId] ?? [] }
        let sender = SignalSender(userId: String(from), receivedAtMillis: receivedAtMillis ?? clock.nowMillis())
        for target in targets { target.receive(text, from: sender) }
    }

    /// Hands `text` to `userId` at once as a channel that does not know who sent it would (no ``SignalSender``:
    /// CallAPI then goes by the ids in the message itself), for injecting what such a channel could carry.
    public func injectWithoutSender(text: String, to userId: UInt) {
        let targets = state.withLock { $0.clients[userId] ?? [] }
        for target in targets { target.receive(text, from: nil) }
    }

    /// Marks `userId` offline (sends to it fail, as with a channel that knows presence) or back online.
    public func setOnline(_ online: Bool, userId: UInt) {
        state.withLock { state in
            if online { state.offline.remove(userId) } else { state.offline.insert(userId) }
        }
    }

    func send(
        from: UInt, device: Int, to userId: String, text: String, completion: (@Sendable ((any Error)?) -> Void)?
    ) {
        guard let to = UInt(userId) else {
            completion?(InMemorySignalError.invalidUserId(userId))
            return
        }
        let envelope = Envelope(
            from: from, to: to, text: text, sentAtMillis: clock.nowMillis(), fromDevice: device)
        let decision = state.withLock { state -> (fault: Fault?, latency: Int64)? in
            state.sent.append(envelope)
            // A message to the sender's own user goes to its other devices only, as our server's copy does.
            let receivers = (state.clients[to] ?? []).filter { to != from || $0.device != device }
            guard !receivers.isEmpty, !state.offline.contains(to) else { return nil }
            if state.partitions.contains(Pair(from, to)) { return (.drop, 0) }
            if let index = state.rules.firstIndex(where: { rule in
                (rule.from ?? from) == from && (rule.to ?? to) == to && rule.remaining > 0
            }) {
                state.rules[index].remaining -= 1
                let fault = state.rules[index].fault
                if state.rules[index].remaining == 0 { state.rules.remove(at: index) }
                return (fault, state.latencyMillis)
            }
            return (state.faultPolicy?(envelope), state.latencyMillis)
        }
        guard let decision else {
            completion?(InMemorySignalError.peerOffline(to))
            return
        }
        completion?(nil)
        switch decision.fault {
        case .drop:
            return
        case .hold:
            state.withLock { $0.held.append(envelope) }
        case .duplicate:
            deliver(envelope, after: decision.latency)
            deliver(envelope, after: decision.latency)
        case .delay(let extra):
            deliver(envelope, after: decision.latency + max(0, extra))
        case nil:
            deliver(envelope, after: decision.latency)
        }
    }

    private func deliver(_ envelope: Envelope, after latency: Int64) {
        guard latency > 0 else { return deliverNow(envelope) }
        _ = clock.schedule(afterMillis: latency) { [weak self] in self?.deliverNow(envelope) }
    }

    /// Hands the envelope to every device of its receiver and, when copying, to the sender's other devices.
    private func deliverNow(_ envelope: Envelope) {
        let (targets, copies, vouches) = state.withLock {
            state -> (targets: [InMemorySignalClient], copies: [InMemorySignalClient], vouches: Bool) in
            let others = (state.clients[envelope.from] ?? []).filter { $0.device != envelope.fromDevice }
            if envelope.to == envelope.from { return (others, [], state.vouchesForSender) }
            return (
                state.clients[envelope.to] ?? [],
                state.copiesToOwnDevices ? others : [],
                state.vouchesForSender
            )
        }
        let sender = SignalSender(userId: String(envelope.from), receivedAtMillis: envelope.sentAtMillis)
        for target in targets + copies { target.receive(envelope.text, from: vouches ? sender : nil) }
    }
}

/// Why the in-memory network refused a send.
public enum InMemorySignalError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidUserId(String)
    case peerOffline(UInt)

    public var description: String {
        switch self {
        case .invalidUserId(let id): "\"\(id)\" is not a user id"
        case .peerOffline(let id): "user \(id) is offline"
        }
    }
}

/// One user's end of an ``InMemorySignalNetwork``.
public final class InMemorySignalClient: ISignalClient {
    public let userId: UInt
    /// Which of its user's devices this is (0: the first).
    public let device: Int
    private let listeners = SignalMessageListeners()
    private weak let network: InMemorySignalNetwork?

    init(userId: UInt, device: Int, network: InMemorySignalNetwork) {
        self.userId = userId
        self.device = device
        self.network = network
    }

    public func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        network?.send(from: self.userId, device: device, to: userId, text: message, completion: completion)
    }

    public func addListener(listener: any ISignalClientListener) {
        listeners.add(listener)
    }

    public func removeListener(listener: any ISignalClientListener) {
        listeners.remove(listener)
    }

    func receive(_ text: String, from sender: SignalSender?) {
        listeners.deliver(text, from: sender)
    }
}
