/// Names one listener added to a ``CallRTCEngine``, for removing it.
public struct RTCEventListenerToken: Hashable, Sendable {
    /// Unique in the process, so a token given to the wrong engine removes nothing.
    let id: UInt64

    private static let lastId = Locked<UInt64>(0)

    static func next() -> RTCEventListenerToken {
        RTCEventListenerToken(
            id: lastId.withLock { last in
                last += 1
                return last
            })
    }
}

/// The listeners of one engine's events: what a ``CallRTCEngine`` conformer keeps to implement
/// ``CallRTCEngine/addEventListener(_:)`` and ``CallRTCEngine/removeEventListener(_:)``, and calls
/// ``emit(_:)`` on to report. Thread-safe.
public final class RTCEventListeners: Sendable {
    private struct Entry: Sendable {
        var token: RTCEventListenerToken
        var listener: @Sendable (RTCEngineEvent) -> Void
    }

    private let entries = Locked<[Entry]>([])

    public init() {}

    /// Adds `listener` after the others.
    @discardableResult
    public func add(_ listener: @escaping @Sendable (RTCEngineEvent) -> Void) -> RTCEventListenerToken {
        let token = RTCEventListenerToken.next()
        entries.withLock { $0.append(Entry(token: token, listener: listener)) }
        return token
    }

    /// Removes the listener `token` names, if it is one of these.
    public func remove(_ token: RTCEventListenerToken) {
        entries.withLock { $0.removeAll { $0.token == token } }
    }

    /// Removes every listener.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// How many listeners there are.
    public var count: Int { entries.withLock { $0.count } }

    /// Reports `event` to every listener, in the order they were added, on this thread. The listeners run
    /// outside the lock, so they may add or remove listeners (effective from the next event).
    public func emit(_ event: RTCEngineEvent) {
        for entry in entries.withLock({ $0 }) { entry.listener(event) }
    }
}
