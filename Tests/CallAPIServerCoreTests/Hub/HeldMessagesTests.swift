import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The hub's held messages on their own: counts and bytes, replacement, removal, expiry in order.
@Suite struct HeldMessagesTests {
    static func message(_ id: String, from: String = "1001", body: String = "hello", expiresAt: Int64)
        -> HeldMessages.Message
    {
        HeldMessages.Message(messageId: id, from: from, body: MessageBody(body), sentAt: 0, expiresAt: expiresAt)
    }

    @Test func countsAndBytesFollowHoldReplaceRemoveAndTakeAll() {
        var held = HeldMessages()
        held.hold(Self.message("m-1", expiresAt: 10_000), for: "1002")
        held.hold(Self.message("m-2", from: "1003", body: "hi", expiresAt: 20_000), for: "1002")
        #expect(held.count == 2)
        #expect(held.bytes == 7)
        #expect(held.count(from: "1001") == 1)
        held.replace(at: 0, for: "1002", body: MessageBody("hello again"), sentAt: 5, expiresAt: 30_000)
        #expect(held.bytes == 13)
        #expect(held.queue(of: "1002").map(\.messageId) == ["m-1", "m-2"])
        #expect(held.remove(for: "1002", where: { $0.from == "1003" })?.messageId == "m-2")
        #expect(held.count(from: "1003") == 0)
        #expect(held.takeAll(for: "1002").map(\.body.text) == ["hello again"])
        #expect(held.count == 0 && held.bytes == 0)
        #expect(held.takeAll(for: "1002").isEmpty)
    }

    @Test func expiryTakesDueMessagesByUserThenInQueueOrderAndFollowsReplacedDeadlines() {
        var held = HeldMessages()
        held.hold(Self.message("a-1", expiresAt: 5_000), for: "b")
        held.hold(Self.message("a-2", expiresAt: 3_000), for: "b")
        held.hold(Self.message("c-1", expiresAt: 4_000), for: "a")
        held.hold(Self.message("d-1", expiresAt: 9_000), for: "c")
        #expect(held.takeExpired(now: 2_999).isEmpty)
        let first = held.takeExpired(now: 5_000)
        #expect(first.map(\.userId) == ["a", "b"])
        #expect(first.map { $0.messages.map(\.messageId) } == [["c-1"], ["a-1", "a-2"]])
        // A replaced deadline: the old one passes without taking the message, the new one takes it.
        held.replace(at: 0, for: "c", body: MessageBody("again"), sentAt: 6_000, expiresAt: 12_000)
        #expect(held.takeExpired(now: 9_000).isEmpty)
        #expect(held.takeExpired(now: 12_000).map(\.userId) == ["c"])
        #expect(held.count == 0)
    }

    @Test func deadlinesOfMessagesThatLeftEarlyDoNotPileUp() {
        var held = HeldMessages()
        for round in 0..<5_000 {
            held.hold(Self.message("m-\(round)", expiresAt: 300_000), for: "1002")
            _ = held.takeAll(for: "1002")
        }
        #expect(held.scheduledDeadlines <= 1025)
        #expect(held.takeExpired(now: 300_000).isEmpty)
    }

    @Test func tombstonesAreKeptPerUserUpToTheCapAndLeaveWhenTheyExpire() {
        var held = HeldMessages()
        func tombstone(_ callId: String, at: Int64) -> Tombstone {
            Tombstone(callId: callId, reason: .cancelled, at: at, expiresAt: at + 120_000)
        }
        held.addTombstone(tombstone("c-1", at: 0), for: "1002", maxPerUser: 2, now: 0)
        held.addTombstone(tombstone("c-2", at: 1_000), for: "1002", maxPerUser: 2, now: 1_000)
        held.addTombstone(tombstone("c-3", at: 2_000), for: "1002", maxPerUser: 2, now: 2_000)
        held.addTombstone(tombstone("c-9", at: 5_000), for: "1003", maxPerUser: 2, now: 5_000)
        // Past the cap the oldest goes; the same call again replaces its tombstone.
        #expect(held.liveTombstones(of: "1002", now: 2_000).map(\.callId) == ["c-2", "c-3"])
        held.addTombstone(tombstone("c-2", at: 3_000), for: "1002", maxPerUser: 2, now: 3_000)
        #expect(held.liveTombstones(of: "1002", now: 3_000).map(\.callId) == ["c-3", "c-2"])
        held.expireTombstones(now: 122_000)
        #expect(held.liveTombstones(of: "1002", now: 122_000).map(\.callId) == ["c-2"])
        #expect(held.tombstoneUserCount == 2)
        held.expireTombstones(now: 125_000)
        #expect(held.tombstoneUserCount == 0)
    }
}
