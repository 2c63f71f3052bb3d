import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The byte-level checks that run before any parsing: request heads and oversized frame heads (WebSocket frame
/// headers: WebSocketClientFrameTests).
@Suite struct ByteScannerTests {
    @Test func aRequestHeadEndsAtTheBlankLineEvenWhenSplitAcrossReads() {
        var scan = RequestHeadScan()
        let head = Array("GET /v1/signal HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n".utf8)
        let scanned1 = scan.scan(head.prefix(30))
        #expect(scanned1 == .incomplete)
        let rest = scan.scan(head.dropFirst(30) + [0x81, 0x85])
        #expect(rest == .complete)
    }

    @Test func aBareLineFeedDoesNotEndTheHeadAndAnEndlessHeadIsTooLong() {
        var plain = RequestHeadScan()
        let bare = plain.scan(Array("GET /healthz HTTP/1.1\n\n\r\n".utf8))
        #expect(bare == .incomplete)
        let ended = plain.scan(Array("\r\n".utf8))
        #expect(ended == .complete)
        var endless = RequestHeadScan()
        let line = Array("X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".utf8)
        var outcome = RequestHeadScan.Outcome.incomplete
        for _ in 0..<1000 where outcome == .incomplete { outcome = endless.scan(line) }
        #expect(outcome == .tooLong)
    }

    @Test func anOversizedFrameIsRefusedFromItsHeadWithoutParsing() {
        let big =
            "{\"type\":\"send\",\"id\":42,\"to\":\"1002\",\"body\":\"" + String(repeating: "y", count: 1 << 20) + "\"}"
        #expect(FrameHeadPeek(big) == FrameHeadPeek(type: "send", requestId: 42))
        let decoded = Array(big.utf8).withUnsafeBufferPointer { SignalHub.decode(utf8: $0, maxFrameBytes: 65_536) }
        guard case .oversized(let bytes, let requestId, let isSend) = decoded else {
            Issue.record("a 1 MiB frame was not refused as oversized")
            return
        }
        #expect(bytes == big.utf8.count)
        #expect(requestId == 42)
        #expect(isSend)
    }

    @Test func aHeadWithoutTypeOrIdGivesNeither() {
        #expect(FrameHeadPeek("{\"body\":\"\\\"type\\\":1\"}") == FrameHeadPeek(type: nil, requestId: nil))
        #expect(FrameHeadPeek("{\"id\":1.5,\"type\":\"ping\"}") == FrameHeadPeek(type: "ping", requestId: nil))
        #expect(FrameHeadPeek("{ \"id\" : -7 , \"type\" : \"users\" }") == FrameHeadPeek(type: "users", requestId: -7))
    }
}
