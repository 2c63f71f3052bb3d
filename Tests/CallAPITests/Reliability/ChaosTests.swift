import CallAPI
import CallAPITesting
import Testing

@Suite("Fault injection: calls never get stuck or split")
struct ChaosTests {
    /// 2,000 seeded scenarios at 20% loss with duplication and reordering; a failure prints seed and trace.
    @Test func twoThousandSeededScenariosAtTwentyPercentLossKeepEveryInvariant() {
        let runner = ChaosRunner()
        var failures: [ChaosOutcome] = []
        var connected = 0
        for seed in UInt64(1)...2_000 {
            let outcome = runner.run(seed: seed)
            connected += outcome.callsConnected
            if !outcome.violations.isEmpty { failures.append(outcome) }
        }
        #expect(failures.isEmpty, "\(failures.first?.report ?? "")")
        // The scenarios must exercise real calls, not only refusals.
        #expect(connected > 500)
    }

    @Test func sameSeedReplaysTheSameScenario() {
        let runner = ChaosRunner()
        let first = runner.run(seed: 42)
        let second = runner.run(seed: 42)
        #expect(first.trace == second.trace)
        #expect(first.messagesSent == second.messagesSent)
        #expect(first.callsConnected == second.callsConnected)
    }

    @Test func aBrokenInvariantIsReportedWithSeedAndTrace() {
        // Without acknowledgements, keep-alives or remote-left checks, a lost hangup leaves the peer
        // connected forever (shortfalls 3 and 7): the runner must catch that.
        var configuration = ChaosConfiguration()
        configuration.reliability = .off
        let runner = ChaosRunner(configuration: configuration)
        let failing = (UInt64(1)...300).lazy.map { runner.run(seed: $0) }.first { !$0.violations.isEmpty }
        #expect(failing != nil)
        if let failing {
            #expect(failing.report.hasPrefix("seed \(failing.seed): "))
            #expect(failing.trace.contains { $0.hasPrefix("msg ") })
            // Each endpoint's state changes are in the trace beside the actions and the messages.
            #expect(failing.trace.contains { $0.contains(" is prepared (") })
            // Replaying the failing seed reproduces the failure.
            #expect(runner.run(seed: failing.seed).violations == failing.violations)
        }
    }
}

extension ChaosTests {
    /// Deployed-client stand-ins in the mix: nothing reaches them twice, and every call ends on our side.
    @Test func legacyEndpointsInTheMixGetNoRepeatsAndLeaveNoCallOfOursStuck() {
        var configuration = ChaosConfiguration()
        configuration.legacyEndpoints = 2
        let runner = ChaosRunner(configuration: configuration)
        var failures: [ChaosOutcome] = []
        var legacyConnected = 0
        for seed in UInt64(1)...1_000 {
            let outcome = runner.run(seed: seed)
            legacyConnected += outcome.legacyCallsConnected
            if !outcome.violations.isEmpty { failures.append(outcome) }
        }
        #expect(failures.isEmpty, "\(failures.first?.report ?? "")")
        #expect(legacyConnected > 100)
    }
}

extension ChaosTests {
    /// Seeds that once left two devices of one user connected in one call (`callapi chaos --devices 3 --legacy 2`):
    /// 13544, a device still ringing (its copy of another device's accept lost to a partition) that accepted too;
    /// 5088744, two devices that accepted while the path to the caller was cut, so that no accept reached it and
    /// its notice could not come back: the bound counts from when the caller can be reached again.
    @Test(arguments: [UInt64(13544), 5_088_744])
    func formerlyFailingMultiDeviceSeedKeepsEveryInvariant(seed: UInt64) {
        var configuration = ChaosConfiguration()
        configuration.maxDevicesPerUser = 3
        configuration.legacyEndpoints = 2
        let outcome = ChaosRunner(configuration: configuration).run(seed: seed)
        #expect(outcome.violations.isEmpty, "\(outcome.report)")
        #expect(outcome.callsConnected > 0)
    }

    /// Seed 1216 once had a deployed-client caller whose callee devices' copies of each other's accepts were lost.
    /// Since callees watch a reliable caller from its call message on (seed 27144083), the keep-alives that adds
    /// change every later draw and the seed connects no call; its case is kept in small in
    /// `MultiDeviceLegacyCallerTests`. It must still keep every invariant.
    @Test func formerlyFailingSeed1216KeepsEveryInvariant() {
        var configuration = ChaosConfiguration()
        configuration.maxDevicesPerUser = 3
        configuration.legacyEndpoints = 2
        let outcome = ChaosRunner(configuration: configuration).run(seed: 1216)
        #expect(outcome.violations.isEmpty, "\(outcome.report)")
    }
}

extension ChaosTests {
    /// The devices check still fails when devices do not settle: with the extension off there is no own notice and
    /// no caller's notice, and a lost copy leaves two devices in one call.
    @Test func twoDevicesLeftInOneCallAreStillReported() {
        var configuration = ChaosConfiguration()
        configuration.maxDevicesPerUser = 3
        configuration.reliability = .off
        let runner = ChaosRunner(configuration: configuration)
        let caught = (UInt64(1)...2_000).lazy.map { runner.run(seed: $0) }.first { outcome in
            outcome.violations.contains { $0.contains(" still ") && $0.hasSuffix(" connected in it") }
        }
        #expect(caught != nil)
    }
}

extension ChaosTests {
    /// Seed 27144083 of `--endpoints 4 --devices 3 --loss 0.3 --dup 0.15 --reorder 0.3`: the caller cancelled before
    /// its first keep-alive, the cancel was lost, and the callee, which armed its liveness timers only on the
    /// caller's first message after the call, accepted and stayed connected alone. The callee now watches a caller
    /// that keeps alive from the call message on.
    @Test func aCalleeWhoseCallerVanishedBeforeItsFirstKeepAliveDoesNotStayConnectedAlone() {
        var configuration = ChaosConfiguration()
        configuration.endpoints = 4
        configuration.maxDevicesPerUser = 3
        configuration.loss = 0.3
        configuration.duplication = 0.15
        configuration.reorder = 0.3
        let outcome = ChaosRunner(configuration: configuration).run(seed: 27_144_083)
        #expect(outcome.violations.isEmpty, "\(outcome.report)")
    }
}

extension ChaosTests {
    /// Seed 26166200 of `--devices 2 --legacy 1`: a deployed iOS client called, cancelled 1 ms later (the cancel was
    /// lost: it sends it once) and called someone else from the same room; our device, still ringing, accepted and
    /// joined that room. A third user in the caller's room now ends our ringing call before anything is shown.
    @Test func aCallerWhoMovedOnToAnotherCallFromTheSameRoomEndsOurRingBeforeMediaIsShown() {
        var configuration = ChaosConfiguration()
        configuration.maxDevicesPerUser = 2
        configuration.legacyEndpoints = 1
        let outcome = ChaosRunner(configuration: configuration).run(seed: 26_166_200)
        #expect(outcome.violations.isEmpty, "\(outcome.report)")
    }
}
