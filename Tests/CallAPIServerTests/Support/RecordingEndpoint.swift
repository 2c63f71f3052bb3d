import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

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

    func received(utf8 text: UnsafeBufferPointer<UInt8>, on id: SessionID, at instant: NIODeadline) -> Bool {
        let text = String(validating: text, as: UTF8.self)
        #expect(text != nil, "the transport handed on bytes that are not UTF-8")
        record.withLockedValue { $0.texts.append(text ?? "") }
        return true
    }
    func receivedBinary(on id: SessionID) { record.withLockedValue { $0.binaries += 1 } }
    func closed(_ id: SessionID) { record.withLockedValue { $0.closed.append(id) } }
}
