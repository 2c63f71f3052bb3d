import Testing

@testable import CallAPI

/// The bounded memory of recent messages (a ring with an open-addressing index): it answers as a plain list of the
/// last `capacity` keys would.
@Suite("Recent messages")
struct RecentMessagesTests {
    /// A key of a few users, calls and message ids, so that repeats, evictions and probe runs all occur.
    static func key(_ number: Int) -> RecentMessages.Key {
        RecentMessages.Key(
            sender: UInt(number % 3), callId: "call-\(number % 7)", messageId: number % 5 == 0 ? nil : number % 11,
            action: number % 2 == 0 ? number % 4 : nil, settlesOnDevice: number % 13 == 0)
    }

    @Test("it remembers exactly the last keys inserted, as a plain list does", arguments: [1, 2, 5, 16, 64])
    func remembersWhatAListWould(capacity: Int) {
        var recent = RecentMessages(capacity: capacity)
        var list: [RecentMessages.Key] = []
        // A fixed pseudo-random walk over the keys: the same run every time.
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let key = Self.key(Int(state >> 33) % 400)
            #expect(recent.contains(key) == list.contains(key))
            recent.insert(key)
            if !list.contains(key) {
                list.append(key)
                if list.count > capacity { list.removeFirst() }
            }
            #expect(recent.oldestFirst == list)
        }
        for number in 0..<400 {
            #expect(recent.contains(Self.key(number)) == list.contains(Self.key(number)))
        }
    }

    @Test("keys that differ in any one field are different keys")
    func everyFieldCounts() {
        let base = RecentMessages.Key(sender: 1, callId: "c", messageId: 2, action: nil)
        var recent = RecentMessages(capacity: 8)
        recent.insert(base)
        #expect(recent.contains(RecentMessages.Key(sender: 1, callId: "c", messageId: 2, action: nil)))
        #expect(!recent.contains(RecentMessages.Key(sender: 2, callId: "c", messageId: 2, action: nil)))
        #expect(!recent.contains(RecentMessages.Key(sender: 1, callId: "d", messageId: 2, action: nil)))
        #expect(!recent.contains(RecentMessages.Key(sender: 1, callId: "c", messageId: 3, action: nil)))
        #expect(!recent.contains(RecentMessages.Key(sender: 1, callId: "c", messageId: nil, action: nil)))
        #expect(!recent.contains(RecentMessages.Key(sender: 1, callId: "c", messageId: 2, action: 2)))
        let settling = RecentMessages.Key(sender: 1, callId: "c", messageId: 2, action: nil, settlesOnDevice: true)
        #expect(!recent.contains(settling))
    }

    @Test("a call id's digest is FNV-1a over its UTF-8 bytes, small strings and large")
    func callIdDigestIsFNV() {
        for callId in ["", "a", "call-1", "a-call-id-longer-than-fifteen-bytes-é", String(repeating: "x", count: 300)] {
            var expected: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in Array(callId.utf8) { expected = (expected ^ UInt64(byte)) &* 0x100_0000_01b3 }
            #expect(RecentMessages.Key.digest(of: callId) == expected)
        }
    }

    @Test("a message is a repeat once seen, by its id or, for call flow messages, by its action")
    func messagesRepeat() {
        var recent = RecentMessages()
        let call = CallMessage(action: .videoCall, timestamp: 1, messageId: 5, fromUserId: 1, callId: "c")
        let first = recent.isRepeat(call, sender: 1)
        let second = recent.isRepeat(call, sender: 1)
        let fromAnother = recent.isRepeat(call, sender: 2)
        #expect(!first && second && !fromAnother)
        var again = call
        again.messageId = 6
        let sameAction = recent.isRepeat(again, sender: 1)
        #expect(sameAction, "the same call flow action of the same call")
        var keepAlive = CallMessage(action: .keepAlive, timestamp: 1, messageId: 7, fromUserId: 1, callId: "c")
        let firstKeepAlive = recent.isRepeat(keepAlive, sender: 1)
        keepAlive.messageId = 8
        let nextKeepAlive = recent.isRepeat(keepAlive, sender: 1)
        #expect(!firstKeepAlive && !nextKeepAlive, "keep-alives repeat only by id")
    }
}
