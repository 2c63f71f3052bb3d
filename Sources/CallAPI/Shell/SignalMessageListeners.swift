/// A signaling client's message listeners, held weakly as ``ISignalClient/addListener(listener:)`` asks, and the
/// messages that arrived before there was one.
///
/// Apps log in to their signaling and then initialize CallAPI, which adds its listener; a call that arrives in
/// between must still ring. So a message that arrives while no listener is added is kept (up to 64 messages or
/// 1 MiB, the oldest let go first) and handed to the first listener added, in order, before any later message.
/// If some were let go, that listener hears it through ``ISignalClientListener/debugInfo(message:logLevel:)``.
///
/// Safe from any thread; listeners are called on the calling thread, never under the lock.
public final class SignalMessageListeners: Sendable {
    private struct Entry: Sendable {
        weak var listener: (any ISignalClientListener)?
    }

    /// Where received messages go.
    private enum Phase: Sendable {
        /// Straight to the listeners.
        case delivering
        /// Nowhere yet: kept.
        case keeping(UnheardMessages)
        /// Kept ones are being handed to a listener just added; new ones queue behind them.
        case handingOver(UnheardMessages)
    }

    private struct State: Sendable {
        var entries: [Entry] = []
        var phase = Phase.keeping(UnheardMessages())

        /// The listeners still alive; the others are forgotten.
        mutating func live() -> [any ISignalClientListener] {
            entries.removeAll { $0.listener == nil }
            return entries.compactMap(\.listener)
        }
    }

    private let state = Locked(State())

    public init() {}

    /// Adds `listener`. If messages arrived while there was no listener, they are handed to it now, oldest first.
    public func add(_ listener: any ISignalClientListener) {
        let handOver = state.withLock { state in
            state.entries.removeAll { $0.listener == nil || $0.listener === listener }
            state.entries.append(Entry(listener: listener))
            guard case .keeping(let kept) = state.phase else { return false }
            state.phase = kept.isEmpty ? .delivering : .handingOver(kept)
            return !kept.isEmpty
        }
        guard handOver else { return }
        while let (batch, dropped, listeners) = nextHandover() {
            if dropped > 0 {
                let text =
                    "\(dropped) received messages were let go before a listener was added: at most "
                    + "\(UnheardMessages.maxCount) messages or \(UnheardMessages.maxBytes) bytes are kept"
                for listener in listeners { listener.debugInfo(message: text, logLevel: CallLogLevel.warning.rawValue) }
            }
            for message in batch {
                for listener in listeners { Self.give(message, to: listener) }
            }
        }
    }

    /// Stops delivering to `listener`.
    public func remove(_ listener: any ISignalClientListener) {
        state.withLock { $0.entries.removeAll { $0.listener == nil || $0.listener === listener } }
    }

    /// Delivers a received message to every listener, or keeps it for the first one added. `sender` is who the
    /// channel vouches sent it, if it knows (``ISignalClientListener/onMessageReceive(message:from:)``).
    public func deliver(_ text: String, from sender: SignalSender? = nil) {
        let message = UnheardMessages.Message(text: text, sender: sender)
        // The entries themselves, not the live listeners: a copy of an array allocates nothing, and this runs for
        // every message.
        let entries = state.withLock { state -> [Entry] in
            switch state.phase {
            case .delivering:
                if state.entries.contains(where: { $0.listener != nil }) { return state.entries }
                state.entries = []
                var kept = UnheardMessages()
                kept.keep(message)
                state.phase = .keeping(kept)
            case .keeping(var kept):
                state.phase = .delivering  // not two copies while `kept` changes
                kept.keep(message)
                state.phase = .keeping(kept)
            case .handingOver(var kept):
                state.phase = .delivering
                kept.keep(message)
                state.phase = .handingOver(kept)
            }
            return []
        }
        for entry in entries {
            guard let listener = entry.listener else { continue }
            Self.give(message, to: listener)
        }
    }

    /// The next kept messages to hand over and who to, or nil once none are left (then messages go straight
    /// to the listeners) or no listener is left to take them (then they stay kept).
    private func nextHandover() -> (batch: [UnheardMessages.Message], dropped: Int, [any ISignalClientListener])? {
        state.withLock { state in
            guard case .handingOver(var kept) = state.phase else { return nil }
            let listeners = state.live()
            guard !listeners.isEmpty else {
                state.phase = .keeping(kept)
                return nil
            }
            guard !kept.isEmpty else {
                state.phase = .delivering
                return nil
            }
            let (batch, dropped) = kept.takeAll()
            state.phase = .handingOver(kept)
            return (batch, dropped, listeners)
        }
    }

    private static func give(_ message: UnheardMessages.Message, to listener: any ISignalClientListener) {
        if let sender = message.sender {
            listener.onMessageReceive(message: message.text, from: sender)
        } else {
            listener.onMessageReceive(message: message.text)
        }
    }
}
