import CallAPISignalProtocol
import Testing

@testable import CallAPIServer

/// The byte-level checks that run before any parsing: request heads, WebSocket masking, oversized frame heads.
@Suite struct ByteScannerTests {
    @Test func aRequestHeadEndsAtTheBlankLineEvenWhenSplitAcrossReads() {
        var scan = RequestHeadScan()
        let head = Array("GET /v1/signal HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n".utf8)
        let scanned1 = scan.scan(head.prefix(30))
        #expect(scanned1 == .incomplete)
        let rest = scan.scan(head.dropFirst(30) + [0x81, 0x85])
        #expect(rest == .complete(upgradesToWebSocket: true, consumed: head.count - 30))
    }

    @Test func aPlainRequestIsNotAnUpgradeAndAnEndlessHeadIsTooLong() {
        var plain = RequestHeadScan()
        let plainOutcome = plain.scan(Array("GET /healthz HTTP/1.1\r\n\r\n".utf8))
        #expect(plainOutcome == .complete(upgradesToWebSocket: false, consumed: 25))
        var endless = RequestHeadScan()
        let line = Array("X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".utf8)
        var outcome = RequestHeadScan.Outcome.incomplete
        for _ in 0..<1000 where outcome == .incomplete { outcome = endless.scan(line) }
        #expect(outcome == .tooLong)
    }

    @Test func maskedFramesPassAndTheFirstUnmaskedOneIsCaught() {
        var check = WebSocketMaskCheck()
        let masked: [UInt8] = [0x81, 0x83, 1, 2, 3, 4, 0x61, 0x62, 0x63]
        let longMasked: [UInt8] = [0x82, 0xFE, 0x01, 0x00, 9, 9, 9, 9] + Array(repeating: 0, count: 256)
        let scanned2 = check.scan(masked)
        #expect(scanned2)
        let scanned3 = check.scan(longMasked.prefix(100))
        #expect(scanned3)
        let scanned4 = check.scan(longMasked.dropFirst(100))
        #expect(scanned4)
        let scanned5 = check.scan(masked.prefix(1))
        #expect(scanned5)
        let scanned6 = check.scan(masked.dropFirst(1))
        #expect(scanned6)
        let scanned7 = check.scan([0x81, 0x03, 0x61, 0x62, 0x63])
        #expect(!scanned7)
    }

    @Test func aHugeDeclaredLengthIsSkippedWithoutOverflow() {
        var check = WebSocketMaskCheck()
        let scanned = check.scan(
            [0x82, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4] + [UInt8](repeating: 0, count: 64))
        #expect(scanned)
    }

    @Test func anOversizedFrameIsRefusedFromItsHeadWithoutParsing() {
        let big =
            "{\"type\":\"send\",\"id\":42,\"to\":\"1002\",\"body\":\"" + String(repeating: "y", count: 1 << 20) + "\"}"
        #expect(FrameHeadPeek(big) == FrameHeadPeek(type: "send", requestId: 42))
        guard case .oversized(let bytes, let requestId, let isSend) = SignalHub.decode(big, maxFrameBytes: 65_536)
        else {
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
