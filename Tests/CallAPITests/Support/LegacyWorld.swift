import CallAPI
import CallAPITesting

/// Our endpoint (user 1), a legacy endpoint (user 9) and a third endpoint of ours (user 3) on one in-memory
/// network and media world, with one manual clock.
final class LegacyWorld: Sendable {
    let clock = ManualClock()
    let network: InMemorySignalNetwork
    let world: SimulatedRTCWorld
    let ours = CallApiImpl()
    let listener = RecordingCallListener()
    let third = CallApiImpl()
    let thirdListener = RecordingCallListener()
    let legacy: LegacyCallEndpoint

    /// - Parameters:
    ///   - oursTimeout: our endpoints' ring timeout; `legacyTimeout` the legacy endpoint's.
    init(
        _ flavour: LegacyFlavour, latencyMillis: Int64 = 20, oursTimeout: UInt64 = 10_000,
        legacyTimeout: Int64 = 15_000, firstFrameLatencyMillis: Int64 = 40
    ) {
        network = InMemorySignalNetwork(clock: clock, latencyMillis: latencyMillis)
        world = SimulatedRTCWorld(
            clock: clock, timing: .init(joinLatencyMillis: 30, firstFrameLatencyMillis: firstFrameLatencyMillis))
        legacy = LegacyCallEndpoint(
            flavour, userId: 9, network: network, world: world, ringTimeoutMillis: legacyTimeout)
        for (user, api, listener) in [(UInt(1), ours, listener), (3, third, thirdListener)] {
            api.addListener(listener: listener)
            api.initialize(
                config: CallConfig(
                    userId: user, rtcEngine: world.engine(userId: user), signalClient: network.client(userId: user),
                    clock: clock))
            api.prepareForCall(
                prepareConfig: PrepareConfig(roomId: "room-\(user)", callTimeoutMillisecond: oursTimeout),
                completion: nil)
        }
    }

    /// Everything our endpoints sent the legacy endpoint more than once (the deployed clients would act on
    /// each copy).
    var repeatsSentToLegacy: [String] {
        var seen = Set<String>()
        return network.sentMessages.filter { $0.to == 9 }.map(\.text).filter { !seen.insert($0).inserted }
    }

    /// What the legacy endpoint must never see from us: repeats and actions it does not know.
    var legacyWasSpokenToInItsOwnTerms: Bool {
        repeatsSentToLegacy.isEmpty && legacy.repeatedMessages.isEmpty && legacy.unknownActionsReceived.isEmpty
    }
}
