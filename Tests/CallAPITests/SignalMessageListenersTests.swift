import Testing

@testable import CallAPI

/// Received messages reach the listeners, and what arrives before the first listener is kept for it.
@Suite struct SignalMessageListenersTests {
    /// Records what it hears; `onFirst` runs inside the first delivery (to deliver more from there).
    final class Recorder: ISignalClientListener {
        private let heard = Locked<[String]>([])
        private let onFirst: Locked<(@Sendable () -> Void)?>

        init(onFirst: (@Sendable () -> Void)? = nil) { self.onFirst = Locked(onFirst) }

        var messages: [String] { heard.withLock { $0 } }

        func onMessageReceive(message: String) { record(message) }

        func onMessageReceive(message: String, from sender: SignalSender) { record("\(sender.userId): \(message)") }

        func debugInfo(message: String, logLevel: Int) {
            record("debug \(CallLogLevel(rawValue: logLevel).map { "\($0)" } ?? "?"): \(message)")
        }

        private func record(_ line: String) {
            heard.withLock { $0.append(line) }
            onFirst.withLock { first in
                defer { first = nil }
                return first
            }?()
        }
    }

    @Test func messagesBeforeAnyListenerReachTheFirstOneInOrderWithTheirSender() {
        let listeners = SignalMessageListeners()
        listeners.deliver("call", from: SignalSender(userId: "7"))
        listeners.deliver("cancel")
        let first = Recorder()
        listeners.add(first)
        listeners.deliver("later")
        #expect(first.messages == ["7: call", "cancel", "later"])
    }

    @Test func aSecondListenerHearsFromWhenItIsAdded() {
        let listeners = SignalMessageListeners()
        listeners.deliver("early")
        let first = Recorder()
        let second = Recorder()
        listeners.add(first)
        listeners.add(second)
        listeners.deliver("both")
        #expect(first.messages == ["early", "both"])
        #expect(second.messages == ["both"])
    }

    @Test func messagesDeliveredDuringAHandOverQueueBehindTheKeptOnes() {
        let listeners = SignalMessageListeners()
        listeners.deliver("kept 1")
        listeners.deliver("kept 2")
        // Delivered while the first kept message is being handed over, as another thread would.
        let recorder = Recorder(onFirst: { listeners.deliver("new") })
        listeners.add(recorder)
        #expect(recorder.messages == ["kept 1", "kept 2", "new"])
    }

    @Test func pastTheBoundTheOldestAreLetGoAndTheListenerIsTold() {
        let listeners = SignalMessageListeners()
        for index in 0...UnheardMessages.maxCount { listeners.deliver("m\(index)") }
        let recorder = Recorder()
        listeners.add(recorder)
        let heard = recorder.messages
        #expect(heard.count == UnheardMessages.maxCount + 1)
        #expect(heard.first?.hasPrefix("debug warning: 1 received messages were let go") == true)
        #expect(heard[1] == "m1")
        #expect(heard.last == "m\(UnheardMessages.maxCount)")
    }

    @Test func aMessageLargerThanAllThatIsKeptIsLetGoAlone() {
        let listeners = SignalMessageListeners()
        listeners.deliver("small")
        listeners.deliver(String(repeating: "x", count: UnheardMessages.maxBytes + 1))
        let recorder = Recorder()
        listeners.add(recorder)
        #expect(recorder.messages.count == 2)
        #expect(recorder.messages.first?.hasPrefix("debug warning: 1 received messages were let go") == true)
        #expect(recorder.messages.last == "small")
    }

    @Test func theOldestMakeRoomPastTheBytes() {
        var unheard = UnheardMessages()
        let half = String(repeating: "x", count: UnheardMessages.maxBytes / 2)
        unheard.keep(.init(text: half, sender: nil))
        unheard.keep(.init(text: half, sender: nil))
        #expect(unheard.dropped == 0)
        unheard.keep(.init(text: "y", sender: nil))
        #expect(unheard.dropped == 1)
        let (kept, dropped) = unheard.takeAll()
        #expect(kept.map(\.text.count) == [half.count, 1])
        #expect(dropped == 1)
        #expect(unheard.isEmpty)
    }

    @Test func onceEveryListenerIsGoneMessagesAreKeptForTheNext() {
        let listeners = SignalMessageListeners()
        weak var gone: Recorder?
        do {
            let first = Recorder()
            gone = first
            listeners.add(first)
            listeners.deliver("heard")
            let heard = first.messages
            #expect(heard == ["heard"])
        }
        #expect(gone == nil)
        listeners.deliver("after the first went away")
        let removed = Recorder()
        listeners.add(removed)
        listeners.remove(removed)
        listeners.deliver("after the second was removed")
        let next = Recorder()
        listeners.add(next)
        #expect(removed.messages == ["after the first went away"])
        #expect(next.messages == ["after the second was removed"])
    }
}
