import CallAPI
import CallAPITesting
import Testing

/// One user: CallAPI over an adapter's signal client, media from the simulated world.
struct AdapterEndpoint {
    let user: UInt
    let api: CallApiImpl
    let changes: AsyncStream<CallStateChange>
    let close: @Sendable () async -> Void

    @discardableResult
    func reaches(_ state: CallStateType, _ reason: CallStateReason? = nil, within seconds: Double = 10) async throws
        -> CallStateChange
    {
        try await changes.first(within: seconds, "\(user) to reach \(state) \(reason.map { "\($0)" } ?? "")") {
            $0.state == state && (reason == nil || $0.reason == reason)
        }
    }

    func finish() async {
        await api.deinitialize()
        await close()
    }
}

/// The full CallAPI flows every adapter must carry: the same as over our own server.
struct AdapterCallFlows {
    /// A logged-in signal client for `user` and how to log it out.
    let connect: @Sendable (UInt) async throws -> (any ISignalClient, @Sendable () async -> Void)
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    func endpoint(_ user: UInt) async throws -> AdapterEndpoint {
        let (signal, close) = try await connect(user)
        let api = CallApiImpl()
        api.initialize(
            config: CallConfig(
                userId: user, rtcEngine: world.engine(userId: user), signalClient: signal, clock: SystemCallClock()))
        let changes = api.stateChanges
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(
                roomId: "room-\(user)", callTimeoutMillisecond: 15_000, firstFrameWaittingDisabled: true))
        return AdapterEndpoint(user: user, api: api, changes: changes, close: close)
    }

    func ring(_ a: AdapterEndpoint, _ b: AdapterEndpoint, type: CallType = .video) async throws {
        try await a.api.call(remoteUserId: b.user, callType: type)
        try await a.reaches(.calling, type == .video ? .localVideoCall : .localAudioCall)
        try await b.reaches(.calling, type == .video ? .remoteVideoCall : .remoteAudioCall)
    }

    func videoCallAcceptedThenHungUp() async throws {
        let users = AdapterServices.users(2)
        let caller = try await endpoint(users[0])
        let callee = try await endpoint(users[1])
        try await ring(caller, callee)
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)
        try await caller.api.hangup(remoteUserId: callee.user)
        try await caller.reaches(.prepared, .localHangup)
        try await callee.reaches(.prepared, .remoteHangup)
        await caller.finish()
        await callee.finish()
    }

    func rejected() async throws {
        let users = AdapterServices.users(2)
        let caller = try await endpoint(users[0])
        let callee = try await endpoint(users[1])
        try await ring(caller, callee, type: .audio)
        try await callee.api.reject(remoteUserId: caller.user, reason: "in a meeting")
        try await callee.reaches(.prepared, .localRejected)
        let change = try await caller.reaches(.prepared, .remoteRejected)
        #expect(change.eventInfo["rejectReason"] == .string("in a meeting"))
        await caller.finish()
        await callee.finish()
    }

    func busy() async throws {
        let users = AdapterServices.users(3)
        let caller = try await endpoint(users[0])
        let callee = try await endpoint(users[1])
        let third = try await endpoint(users[2])
        try await ring(caller, callee)
        try await callee.api.accept(remoteUserId: caller.user)
        try await callee.reaches(.connected)
        try await third.api.call(remoteUserId: callee.user, callType: .video)
        let busy = try await third.reaches(.prepared, .remoteCallBusy)
        #expect(busy.eventInfo["rejectReason"] == .string("The user is currently busy"))
        #expect(callee.api.state == .connected)
        await caller.finish()
        await callee.finish()
        await third.finish()
    }
}
