import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// Mailbox rows delivered from their notification or by a read (docs/scale-out.md, "Latency"): each once, and in the
/// order they were written.
@Suite struct MailboxDeliveriesTests {
    static func row(_ id: Int64) -> (id: Int64, envelope: ClusterEnvelope) {
        (
            id,
            ClusterEnvelope(
                node: "b", userId: "2", from: "1", body: MessageBody("m\(id)"), sentAt: id, messageId: "m-a-\(id)")
        )
    }

    static func bodies(_ outcome: MailboxDeliveries.Notified) -> [String]? {
        if case .deliver(let envelopes) = outcome { envelopes.map(\.body.text) } else { nil }
    }

    /// Past the first read, with nothing waiting.
    static func direct() -> MailboxDeliveries {
        var deliveries = MailboxDeliveries(limit: 4)
        let first = deliveries.readStarts()
        _ = deliveries.read(first, rows: [], drained: true)
        return deliveries
    }

    @Test func untilTheFirstReadNotifiedRowsWaitForIt() {
        var deliveries = MailboxDeliveries()
        #expect(deliveries.notified([Self.row(1)]) == .read)
        let read = deliveries.readStarts()
        #expect(deliveries.read(read, rows: [Self.row(1)], drained: true).map(\.body.text) == ["m1"])
        #expect(Self.bodies(deliveries.notified([Self.row(2)])) == ["m2"])
    }

    @Test func rowsDeliveredFromTheirNotificationAreNotDeliveredAgainByTheRead() {
        var deliveries = Self.direct()
        #expect(Self.bodies(deliveries.notified([Self.row(1), Self.row(2)])) == ["m1", "m2"])
        #expect(deliveries.deliveredAhead == 2)
        let read = deliveries.readStarts()
        #expect(
            deliveries.read(read, rows: [Self.row(1), Self.row(2), Self.row(3)], drained: true).map(\.body.text) == [
                "m3"
            ])
        #expect(deliveries.deliveredAhead == 0)
        // Row 3's notification, after the read that delivered it: nothing.
        #expect(Self.bodies(deliveries.notified([Self.row(3)])) == [])
    }

    @Test func afterANotificationWithoutItsRowsTheNextWaitUntilAReadBegunAfterItDrains() {
        var deliveries = Self.direct()
        let before = deliveries.readStarts()
        // Row 1 was too large to carry: row 2 must not overtake it.
        #expect(deliveries.notified(nil) == .read)
        #expect(deliveries.notified([Self.row(2)]) == .read)
        // A read that began before the gap does not end it.
        #expect(deliveries.read(before, rows: [], drained: true).isEmpty)
        #expect(deliveries.notified([Self.row(3)]) == .read)
        // One that began after it but did not drain the mailbox does not either.
        let partial = deliveries.readStarts()
        #expect(deliveries.read(partial, rows: [Self.row(1)], drained: false).map(\.body.text) == ["m1"])
        #expect(deliveries.notified([Self.row(4)]) == .read)
        let rest = deliveries.readStarts()
        #expect(deliveries.read(rest, rows: [Self.row(2), Self.row(3), Self.row(4)], drained: true).count == 3)
        #expect(Self.bodies(deliveries.notified([Self.row(5)])) == ["m5"])
    }

    @Test func aListenerThatReconnectedWaitsForARead() {
        var deliveries = Self.direct()
        deliveries.listening()
        #expect(deliveries.notified([Self.row(7)]) == .read)
        let read = deliveries.readStarts()
        _ = deliveries.read(read, rows: [Self.row(6), Self.row(7)], drained: true)
        #expect(Self.bodies(deliveries.notified([Self.row(8)])) == ["m8"])
    }

    @Test func pastTheLimitOfRowsDeliveredAheadTheyWaitForARead() {
        var deliveries = Self.direct()
        #expect(Self.bodies(deliveries.notified((1...3).map(Self.row))) == ["m1", "m2", "m3"])
        #expect(deliveries.notified([Self.row(4), Self.row(5)]) == .read)
        let read = deliveries.readStarts()
        let delivered = deliveries.read(read, rows: (1...5).map(Self.row), drained: true)
        #expect(delivered.map(\.body.text) == ["m4", "m5"])
        #expect(deliveries.deliveredAhead == 0)
    }
}
