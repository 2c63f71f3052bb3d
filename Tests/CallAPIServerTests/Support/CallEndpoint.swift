import CallAPI
import CallAPISignalClient
import CallAPITesting

/// One user in an end-to-end test: CallAPI over a signaling client that has logged in, with simulated media.
struct CallEndpoint {
    let user: UInt
    let api: CallApiImpl
    let signal: SignalClient
    let changes: AsyncStream<CallStateChange>

    /// CallAPI initialized and prepared over `signal` (logged in already), its room `room-<user>`; its timers
    /// (ring timeout, retries, keep-alives) run on `clock`.
    static func prepared(
        _ user: UInt, signal: SignalClient, world: SimulatedRTCWorld, ringTimeoutMillis: UInt64 = 15_000,
        clock: any CallClock = SystemCallClock()
    ) async throws -> CallEndpoint {
        let api = CallApiImpl()
        api.initialize(
            config: CallConfig(userId: user, rtcEngine: world.engine(userId: user), signalClient: signal, clock: clock))
        let changes = api.stateChanges
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(
                roomId: "room-\(user)", callTimeoutMillisecond: ringTimeoutMillis, firstFrameWaittingDisabled: true))
        return CallEndpoint(user: user, api: api, signal: signal, changes: changes)
    }

    /// Waits for a state change to `state` (and `reason`, if given).
    @discardableResult
    func reaches(_ state: CallStateType, _ reason: CallStateReason? = nil, within seconds: Double = 5) async throws
        -> CallStateChange
    {
        try await changes.first(within: seconds, "\(user) to reach \(state) \(reason.map { "\($0)" } ?? "")") {
            $0.state == state && (reason == nil || $0.reason == reason)
        }
    }

    /// The next state change, whatever it is.
    func nextChange(within seconds: Double = 10) async throws -> CallStateChange {
        try await changes.first(within: seconds, "\(user)'s next state change") { _ in true }
    }

    func close() async {
        await api.deinitialize()
        signal.logout()
    }
}
