import CallAPIServerCore
import Testing

/// The token lease both endpoints keep per session: expiry, a single notice, renewals.
@Suite struct TokenLeaseTests {
    /// What is due at each of `times`, with a 10 s notice.
    func due(_ lease: inout TokenLease, at times: [Int64]) -> [TokenLease.Due?] {
        times.map { lease.due(now: $0, noticeMillis: 10_000) }
    }

    @Test func theNoticeIsDueOnceNoticeMillisBeforeTheExpiry() {
        var lease = TokenLease(expiresAt: 60_000)
        #expect(due(&lease, at: [49_999, 50_000, 55_000]) == [nil, .notice, nil])
        #expect(lease.notice == .sent)
    }

    @Test func theExpiryIsDueFromTheExpiryTimeOn() {
        var lease = TokenLease(expiresAt: 60_000)
        #expect(!lease.isExpired(at: 59_999))
        #expect(lease.isExpired(at: 60_000))
        #expect(due(&lease, at: [60_000, 61_000]) == [.expiry, .expiry])
        // The expiry does not count as the notice.
        #expect(lease.notice == .pending)
    }

    @Test func onlyOneRenewalIsCheckedAtATime() {
        var lease = TokenLease(expiresAt: 60_000)
        let first = lease.startRenewal()
        let second = lease.startRenewal()
        #expect(first && !second)
        #expect(lease.renewal == .checking)
        lease.renewalRefused()
        #expect(lease.renewal == .none)
        let afterRefusal = lease.startRenewal()
        #expect(afterRefusal)
    }

    @Test func aRefusedRenewalLeavesTheTokenAndItsNoticeAsTheyWere() {
        var lease = TokenLease(expiresAt: 60_000)
        #expect(due(&lease, at: [50_000]) == [.notice])
        let before = lease
        _ = lease.startRenewal()
        lease.renewalRefused()
        #expect(lease == before)
        #expect(due(&lease, at: [59_000, 60_000]) == [nil, .expiry])
    }

    @Test func anAcceptedRenewalMovesTheExpiryAndRearmsTheNotice() {
        var lease = TokenLease(expiresAt: 60_000)
        #expect(due(&lease, at: [50_000]) == [.notice])
        _ = lease.startRenewal()
        lease.renewed(until: 120_000)
        #expect(lease.expiresAt == 120_000)
        #expect(lease.renewal == .none)
        #expect(due(&lease, at: [60_000, 110_000, 115_000, 120_000]) == [nil, .notice, nil, .expiry])
    }

    @Test func theNoticeAndTheExpiryFallDueWhileARenewalIsChecked() {
        var lease = TokenLease(expiresAt: 60_000)
        _ = lease.startRenewal()
        #expect(due(&lease, at: [50_000, 60_000]) == [.notice, .expiry])
        #expect(lease.renewal == .checking)
    }
}
