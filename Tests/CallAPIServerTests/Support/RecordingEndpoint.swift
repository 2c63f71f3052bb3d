import NIOConcurrencyHelpers
import NIOCore

@testable import CallAPIServer

/// A session endpoint that only records what the transport tells it.
final class RecordingEndpoint: SessionEndpoint {
    static let sessionID = SessionID(1)
    private let record = NIOLockedValueBox<(texts: [String], binaries: Int, closed: [SessionID])>(([], 0, []))
    let maxMessageBytes: Int

    init(maxMessageBytes: Int = 1024) { self.maxMessageBytes = maxMessageBytes }

    var receivedTexts: [String] { record.withLockedValue { $0.texts } }
    var receivedBinaries: Int { record.withLockedValue { $0.binaries } }
    var closedSessions: [SessionID] { record.withLockedValue { $0.closed } }

    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
        WebSocketConnection(id: Self.sessionID, channel: channel, flusher: flusher, tally: WriteTally(), metrics: nil)
    }

    func received(text: String, on id: SessionID, at instant: ContinuousClock.Instant) -> Bool {
        record.withLockedValue { $0.texts.append(text) }
        return true
    }
    func receivedBinary(on id: SessionID) { record.withLockedValue { $0.binaries += 1 } }
    func closed(_ id: SessionID) { record.withLockedValue { $0.closed.append(id) } }
}
