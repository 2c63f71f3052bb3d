import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import NIOConcurrencyHelpers

/// Collects what a signaling channel hands to CallAPI.
final class RecordingSignalListener: ISignalClientListener {
    private let stream: AsyncStream<(String, SignalSender?)>
    private let continuation: AsyncStream<(String, SignalSender?)>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func onMessageReceive(message: String) { continuation.yield((message, nil)) }
    func onMessageReceive(message: String, from sender: SignalSender) { continuation.yield((message, sender)) }

    /// The messages as a stream (read it from one task).
    var messages: AsyncStream<(String, SignalSender?)> { stream }

    /// Ends the stream: what it has so far is all it gives.
    func finish() { continuation.finish() }
}

/// Records connection callbacks.
final class RecordingConnectionListener: SignalConnectionListener {
    let events: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init() { (events, continuation) = AsyncStream.makeStream() }

    func onConnected() { continuation.yield("connected") }
    func onDisconnected(reason: String) { continuation.yield("disconnected") }
    func onTokenPrivilegeWillExpire(expiresAtMillis: Int64) { continuation.yield("willExpire") }
}

/// Hands on CallAPI's events as a stream.
final class CallEventRecorder: CallApiListenerProtocol {
    let events: AsyncStream<CallEvent>
    private let continuation: AsyncStream<CallEvent>.Continuation

    init() { (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(100)) }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {}
    func onCallEventChanged(with event: CallEvent, eventReason: String?) { continuation.yield(event) }
}

extension AsyncStream where Element: Sendable {
    /// The first element matching `match`, within `seconds`.
    func first(
        within seconds: Double = 5, _ what: String = "an element", where match: @escaping @Sendable (Element) -> Bool
    )
        async throws -> Element
    {
        let stream = self
        return try await withTimeout(seconds, what) {
            for await element in stream where match(element) { return element }
            throw TimedOut(what: "\(what) (stream ended)")
        }
    }
}
