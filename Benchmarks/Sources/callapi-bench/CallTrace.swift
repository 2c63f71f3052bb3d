import CallAPI
import Foundation
import NIOConcurrencyHelpers

/// The last things one endpoint of the calls bench saw — its state changes, events, CallAPI's diagnostic text,
/// and the call messages its signaling client sent and received — kept so that a failed call can be explained.
///
/// Kept only when the calls bench is asked to (``CallsBench/Settings/traceFailures``): recording costs the
/// clients a little per message, which the timed runs should not pay.
final class CallTrace: CallApiListenerProtocol {
    /// How many entries are kept; older ones are dropped.
    static let capacity = 48

    let user: UInt
    private let start: UInt64
    private let entries = NIOLockedValueBox(Ring())

    init(user: UInt, start: UInt64 = BenchClock.nanos()) {
        self.user = user
        self.start = start
    }

    /// Records one line, stamped with milliseconds since the trace began.
    func record(_ text: String) {
        let millis = Double((BenchClock.nanos() &- start) / 100_000) / 10
        entries.withLockedValue { $0.append("\(millis) ms \(text)") }
    }

    /// The kept lines, oldest first.
    var lines: [String] { entries.withLockedValue { $0.inOrder } }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        record("state \(state) (\(stateReason))")
    }

    func onCallEventChanged(with event: CallEvent, eventReason: String?) {
        record("event \(event)")
    }

    func onCallError(with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?) {
        record("error \(errorEvent) \(errorCode): \(message ?? "")")
    }

    func callDebugInfo(message: String, logLevel: CallLogLevel) {
        record("debug \(message)")
    }

    /// A fixed-size ring of lines.
    private struct Ring {
        private var storage: [String] = []
        private var next = 0

        mutating func append(_ line: String) {
            if storage.count < CallTrace.capacity {
                storage.append(line)
            } else {
                storage[next] = line
                next = (next + 1) % CallTrace.capacity
            }
        }

        var inOrder: [String] { Array(storage[next...] + storage[..<next]) }
    }
}

/// A signaling client that writes every message it sends (and how the send ended) and every message it
/// delivers into a ``CallTrace``, then does what `inner` does.
final class TracedSignalClient: BenchPeerClient {
    private let inner: any BenchPeerClient
    private let trace: CallTrace
    /// The forwarding listeners: `inner` holds listeners weakly, so they are kept here.
    private let forwarders = NIOLockedValueBox([ObjectIdentifier: Forwarder]())

    init(_ inner: any BenchPeerClient, trace: CallTrace) {
        self.inner = inner
        self.trace = trace
    }

    func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        let trace = trace
        let summary = Self.summary(of: message)
        trace.record("sent to \(userId): \(summary)")
        inner.sendMessage(userId: userId, message: message) { error in
            trace.record("send of \(summary) \(error.map { "failed: \($0)" } ?? "accepted")")
            completion?(error)
        }
    }

    func addListener(listener: any ISignalClientListener) {
        let forwarder = Forwarder(listener: listener, trace: trace)
        forwarders.withLockedValue { $0[ObjectIdentifier(listener)] = forwarder }
        inner.addListener(listener: forwarder)
    }

    func removeListener(listener: any ISignalClientListener) {
        guard let forwarder = forwarders.withLockedValue({ $0.removeValue(forKey: ObjectIdentifier(listener)) })
        else { return }
        inner.removeListener(listener: forwarder)
    }

    func close() async { await inner.close() }

    /// The message's action and call id, which is what tells one message from another in a trace. Read with
    /// Foundation: CallAPI's own message type is not public, and a trace needs only these two members.
    static func summary(of message: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any],
            let action = object["message_action"] as? Int, let callId = object["callId"] as? String
        else {
            return "unreadable (\(message.utf8.count) bytes)"
        }
        return "message_action \(action) of call \(callId)"
    }

    private final class Forwarder: ISignalClientListener {
        private weak let listener: (any ISignalClientListener)?
        private let trace: CallTrace

        init(listener: any ISignalClientListener, trace: CallTrace) {
            self.listener = listener
            self.trace = trace
        }

        func onMessageReceive(message: String) {
            trace.record("received \(TracedSignalClient.summary(of: message))")
            listener?.onMessageReceive(message: message)
        }

        func onMessageReceive(message: String, from sender: SignalSender) {
            trace.record("received from \(sender.userId): \(TracedSignalClient.summary(of: message))")
            listener?.onMessageReceive(message: message, from: sender)
        }

        func debugInfo(message: String, logLevel: Int) {
            trace.record("signal \(message)")
            listener?.debugInfo(message: message, logLevel: logLevel)
        }
    }
}
