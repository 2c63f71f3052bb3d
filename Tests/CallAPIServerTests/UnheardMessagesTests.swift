import CallAPISignalProtocol
import Testing

@testable import CallAPISignalClient

/// The bound on messages a client keeps for a listener not yet added.
@Suite struct UnheardMessagesTests {
    func message(_ index: Int, bytes: Int = 1) -> ServerFrame.Message {
        ServerFrame.Message(
            from: "1001", body: String(repeating: "x", count: bytes), sentAt: 0, messageId: "m\(index)")
    }

    @Test func keepsMessagesInOrderUntilTaken() {
        var unheard = UnheardMessages()
        for index in 0..<3 { #expect(unheard.keep(message(index)).isEmpty) }
        #expect(unheard.takeAll().map(\.messageId) == ["m0", "m1", "m2"])
        #expect(unheard.isEmpty)
        #expect(unheard.takeAll().isEmpty)
    }

    @Test func theOldestMakeRoomPastTheCount() {
        var unheard = UnheardMessages()
        for index in 0..<UnheardMessages.maxCount { #expect(unheard.keep(message(index)).isEmpty) }
        let dropped = unheard.keep(message(UnheardMessages.maxCount))
        #expect(dropped.map(\.messageId) == ["m0"])
        let kept = unheard.takeAll()
        #expect(kept.count == UnheardMessages.maxCount)
        #expect(kept.first?.messageId == "m1")
        #expect(kept.last?.messageId == "m\(UnheardMessages.maxCount)")
    }

    @Test func theOldestMakeRoomPastTheBytes() {
        var unheard = UnheardMessages()
        let half = UnheardMessages.maxBytes / 2
        #expect(unheard.keep(message(0, bytes: half)).isEmpty)
        #expect(unheard.keep(message(1, bytes: half)).isEmpty)
        #expect(unheard.keep(message(2, bytes: 1)).map(\.messageId) == ["m0"])
        #expect(unheard.takeAll().map(\.messageId) == ["m1", "m2"])
    }

    @Test func aMessageLargerThanTheBoundIsNotKept() {
        var unheard = UnheardMessages()
        #expect(unheard.keep(message(0)).isEmpty)
        let dropped = unheard.keep(message(1, bytes: UnheardMessages.maxBytes + 1))
        #expect(dropped.map(\.messageId) == ["m1"])
        #expect(unheard.takeAll().map(\.messageId) == ["m0"])
    }
}
