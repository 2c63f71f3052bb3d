import Testing

@testable import CallAPIServerCore

/// A node's membership of its cluster: registering with an epoch, beating, reading, and registering again once it
/// may have been declared dead (docs/scale-out.md).
@Suite struct ClusterMembershipTests {
    var timings: ClusterTimings {
        var timings = ClusterTimings()
        timings.heartbeatMillis = 1_000
        timings.deadAfterMillis = 5_000
        timings.pollMillis = 250
        timings.presenceMillis = 1_000
        timings.retryMillis = 500
        return timings
    }

    @Test func aNodeRegistersOnceThenWritesItsSessionsAndReadsTheOthersAndItsMailbox() {
        var membership = ClusterMembership(timings: timings)
        #expect(membership.handle(.tick, now: 0) == [.register])
        // One registration at a time.
        #expect(membership.handle(.tick, now: 100).isEmpty)
        #expect(membership.epoch == nil)
        #expect(
            membership.handle(.registered(epoch: 7), now: 120) == [
                .republish(epoch: 7), .readPresence, .poll(epoch: 7),
            ])
        #expect(membership.epoch == 7)
    }

    @Test func aFailedRegistrationIsRetriedAfterThePause() {
        var membership = ClusterMembership(timings: timings)
        _ = membership.handle(.tick, now: 0)
        #expect(membership.handle(.registerFailed, now: 10).isEmpty)
        #expect(membership.handle(.tick, now: 500).isEmpty)
        #expect(membership.nextDue == 510)
        #expect(membership.handle(.tick, now: 510) == [.register])
    }

    @Test func aMemberBeatsSweepsReadsAndPollsEachOnItsOwnPeriod() {
        var membership = ClusterMembership(timings: timings)
        _ = membership.handle(.tick, now: 0)
        _ = membership.handle(.registered(epoch: 3), now: 0)
        #expect(membership.nextDue == 250)
        #expect(membership.handle(.tick, now: 250) == [.poll(epoch: 3)])
        #expect(membership.handle(.tick, now: 300).isEmpty)
        #expect(membership.handle(.tick, now: 1_000) == [.beat(epoch: 3), .sweep, .readPresence, .poll(epoch: 3)])
        #expect(membership.handle(.beatSaved, now: 1_005).isEmpty)
    }

    @Test func aNotificationPollsAtOnceAndPutsThePollTimerBack() {
        var membership = ClusterMembership(timings: timings)
        _ = membership.handle(.tick, now: 0)
        _ = membership.handle(.registered(epoch: 3), now: 0)
        #expect(membership.handle(.woken, now: 100) == [.poll(epoch: 3)])
        #expect(membership.handle(.tick, now: 250).isEmpty)
        #expect(membership.handle(.tick, now: 350) == [.poll(epoch: 3)])
        #expect(membership.handle(.othersChanged, now: 360) == [.readPresence])
    }

    @Test func aNodeFoundDeadRegistersAgainAndNeitherPollsNorForwardsMeanwhile() {
        var membership = ClusterMembership(timings: timings)
        _ = membership.handle(.tick, now: 0)
        _ = membership.handle(.registered(epoch: 3), now: 0)
        #expect(membership.handle(.beatLost, now: 1_000) == [.register])
        #expect(membership.epoch == nil)
        #expect(membership.handle(.woken, now: 1_010).isEmpty)
        #expect(membership.handle(.tick, now: 2_000).isEmpty)
        #expect(membership.handle(.registered(epoch: 9), now: 2_010).first == .republish(epoch: 9))
        #expect(membership.epoch == 9)
    }

    /// A node stopped (SIGSTOP) or cut off from the database for longer than the dead limit may have been swept:
    /// whatever its heartbeat would say, it registers again before it delivers anything.
    @Test func aNodeThatCouldNotBeatForTheDeadLimitStopsBeingAMemberAndRegistersAgain() {
        var membership = ClusterMembership(timings: timings)
        _ = membership.handle(.tick, now: 0)
        _ = membership.handle(.registered(epoch: 3), now: 0)
        _ = membership.handle(.tick, now: 1_000)
        #expect(membership.handle(.beatFailed, now: 1_001).isEmpty)
        #expect(membership.epoch == 3)
        #expect(membership.handle(.tick, now: 4_999).contains(.beat(epoch: 3)))
        #expect(membership.handle(.tick, now: 5_000) == [.register])
        #expect(membership.epoch == nil)
    }

    @Test func aStoppingMemberLeavesOnceAndThenDoesNothing() {
        var membership = ClusterMembership(timings: timings)
        _ = membership.handle(.tick, now: 0)
        _ = membership.handle(.registered(epoch: 3), now: 0)
        #expect(membership.handle(.stop, now: 10) == [.leave(epoch: 3)])
        #expect(membership.handle(.stop, now: 11).isEmpty)
        #expect(membership.handle(.tick, now: 5_000).isEmpty)
        #expect(membership.nextDue == nil && membership.epoch == nil)
    }
}
