import CallAPITesting
import Testing

@testable import CallAPI

/// A local request, as a row of the table.
enum LocalAction: String, CaseIterable, Sendable, CustomStringConvertible {
    case initialize, prepare, call, cancel, accept, reject, hangup, renewToken
    var description: String { rawValue }
}

/// What the spec says a local action does in a state (call-behaviour.md, "Local actions").
enum LocalOutcome: Equatable, CustomStringConvertible {
    /// Done: the endpoint reports this state change (nil: no state change, as `initialize`).
    case accepted(StateReason?)
    /// Refused: the completion gets an error with this code; nothing else changes.
    case refused(CallAPIError.Code)
    /// Not a request with a completion; nothing changes (a warning is logged).
    case ignored

    var description: String {
        switch self {
        case .accepted(let change): "accepted \(change.map(\.description) ?? "(no state change)")"
        case .refused(let code): "refused \(code)"
        case .ignored: "ignored"
        }
    }

    static func expected(_ action: LocalAction, in situation: MachineDriver.Situation) -> LocalOutcome {
        switch (action, situation) {
        case (.initialize, .idleUninitialized): .accepted(nil)
        case (.initialize, _): .ignored
        case (.renewToken, _): .ignored
        case (.prepare, .idleUninitialized), (.call, .idleUninitialized): .refused(.notInitialized)
        case (.prepare, .idleInitialized), (.prepare, .prepared), (.prepare, .failed):
            .accepted(.init(.prepared, .none))
        case (.call, .prepared): .accepted(.init(.calling, .localVideoCall))
        case (.cancel, .callingAsCaller): .accepted(.init(.prepared, .localCancelled))
        case (.accept, .callingAsCallee): .accepted(.init(.connecting, .localAccepted))
        case (.reject, .callingAsCallee): .accepted(.init(.prepared, .localRejected))
        case (.hangup, .callingAsCaller): .accepted(.init(.prepared, .localCancelled))
        case (.hangup, .callingAsCallee): .accepted(.init(.prepared, .localRejected))
        case (.hangup, .connecting), (.hangup, .connected), (.hangup, .connectingAsCallee),
            (.hangup, .connectedAsCallee):
            .accepted(.init(.prepared, .localHangup))
        default: .refused(.stateMismatch)
        }
    }
}

@Suite("Local actions in every state")
struct StateMachineLocalActionTests {
    static func input(_ action: LocalAction, peer: UInt) -> CallInput {
        switch action {
        case .initialize: .initialize(userId: MachineDriver.selfId)
        case .prepare: .prepare(MachineDriver.prepareConfig())
        case .call: .call(remoteUserId: peer, type: .video, extension: nil, callId: "call-new")
        case .cancel: .cancel
        case .accept: .accept(remoteUserId: peer)
        case .reject: .reject(remoteUserId: peer, reason: "no")
        case .hangup: .hangup(remoteUserId: peer, reason: "bye")
        case .renewToken: .renewToken("token-new")
        }
    }

    @Test(
        "The pure machine accepts or refuses each local action as the spec's table says",
        arguments: MachineDriver.Situation.allCases, LocalAction.allCases)
    func machineTable(situation: MachineDriver.Situation, action: LocalAction) {
        var driver = MachineDriver(situation)
        let before = driver.machine
        let actions = driver.handle(Self.input(action, peer: MachineDriver.peerId))
        let expected = LocalOutcome.expected(action, in: situation)

        switch expected {
        case .accepted(let change):
            if let change {
                #expect(actions.stateChanges.last.map { StateReason($0.state, $0.reason) } == change)
                #expect(driver.machine.state == change.state)
                #expect(actions.completion == .some(nil), "the request completes without error")
            } else {
                #expect(actions.stateChanges.isEmpty)
                #expect(driver.machine.state == situation.state)
            }
            #expect(!actions.events.contains(.stateMismatch))
        case .refused(let code):
            let error = actions.error
            #expect(error?.code == code)
            #expect(
                error?.message.contains("(state: \(situation.state))") == true, "says why: \(String(describing: error))"
            )
            #expect(actions.events.contains(.stateMismatch) == (code == .stateMismatch))
            #expect(actions.stateChanges.isEmpty)
            #expect(actions.sent.isEmpty)
            #expect(!actions.contains { $0.isJoin || $0.isLeave || $0.isStartTimer || $0.isStopTimer })
            #expect(driver.machine.state == before.state)
            #expect(driver.machine.call == before.call, "the current call is untouched")
            #expect(driver.machine.callId == before.callId)
        case .ignored:
            #expect(actions.completion == nil)
            #expect(actions.stateChanges.isEmpty)
            #expect(actions.sent.isEmpty)
            #expect(driver.machine.state == before.state)
            #expect(driver.machine.call == before.call)
            #expect(driver.machine.userId == before.userId)
        }
    }

    @Test(
        "Through CallApiImpl each local action is accepted or refused with an error, a stateMismatch event where it is a call-flow action, and no change",
        arguments: MachineDriver.Situation.allCases, LocalAction.allCases)
    func fullStackTable(situation: MachineDriver.Situation, action: LocalAction) {
        let h = CallHarness.situations()
        let (actor, peer) = h.reach(situation)
        let api = h[actor].api
        let callIdBefore = api.getCallId()
        let sentBefore = h.network.sentMessages.count
        let channelBefore = h[actor].engine.channel

        var probe: CompletionProbe?
        switch action {
        case .initialize:
            api.initialize(
                config: CallConfig(
                    appId: "test", userId: actor, rtcEngine: h[actor].engine,
                    signalClient: h.network.client(userId: actor), clock: h.clock))
        case .prepare:
            let config = PrepareConfig(roomId: h[actor].roomId, rtcToken: "t")
            probe = api.probe { $0.prepareForCall(prepareConfig: config, completion: $1) }
        case .call: probe = api.probe { $0.call(remoteUserId: peer, completion: $1) }
        case .cancel: probe = api.probe { $0.cancelCall(completion: $1) }
        case .accept: probe = api.probe { $0.accept(remoteUserId: peer, completion: $1) }
        case .reject: probe = api.probe { $0.reject(remoteUserId: peer, reason: "no", completion: $1) }
        case .hangup: probe = api.probe { $0.hangup(remoteUserId: peer, reason: "bye", completion: $1) }
        case .renewToken: api.renewToken(with: "token-new")
        }

        let listener = h[actor].listener
        switch LocalOutcome.expected(action, in: situation) {
        case .accepted(let change):
            if let change {
                #expect(probe?.succeeded == true)
                #expect(listener.stateReasons.first == change)
            } else {
                #expect(listener.stateRecords.isEmpty)
                #expect(api.state == situation.state)
                // Initialized now: prepareForCall works.
                let prepare = api.probe {
                    $0.prepareForCall(prepareConfig: PrepareConfig(roomId: "room-\(actor)"), completion: $1)
                }
                #expect(prepare.succeeded)
            }
            #expect(!listener.events.contains(.stateMismatch))
        case .refused(let code):
            #expect(probe?.count == 1)
            #expect(
                probe?.errorMessage?.contains("(state: \(situation.state))") == true,
                "\(probe?.errorMessage ?? "no error")")
            #expect(listener.events.contains(.stateMismatch) == (code == .stateMismatch))
            #expect(listener.stateRecords.isEmpty, "no state change")
            #expect(api.state == situation.state)
            #expect(api.getCallId() == callIdBefore)
            #expect(h.network.sentMessages.count == sentBefore, "nothing sent")
            #expect(h[actor].engine.channel == channelBefore, "RTC untouched")
            #expect(h[peer].listener.stateRecords.isEmpty, "the peer sees nothing")
        case .ignored:
            #expect(listener.stateRecords.isEmpty)
            #expect(api.state == situation.state)
            #expect(api.getCallId() == callIdBefore)
            #expect(h.network.sentMessages.count == sentBefore)
        }
    }

    @Test("initialize when already initialized is ignored with a warning and keeps the first user id")
    func initializeTwiceKeepsFirstUser() {
        var driver = MachineDriver(.prepared)
        let actions = driver.handle(.initialize(userId: 9))
        #expect(actions.contains { if case .log(.warning, _) = $0 { true } else { false } })
        #expect(driver.machine.userId == MachineDriver.selfId)
        #expect(driver.machine.prepareConfig?.roomId == MachineDriver.ownRoom, "the config is kept")
    }

    @Test("prepareForCall keeps a copy of the config and leaves any RTC channel")
    func prepareStoresConfigAndLeavesRTC() {
        var driver = MachineDriver(.idleInitialized)
        var config = MachineDriver.prepareConfig(timeout: 4_321)
        let actions = driver.handle(.prepare(config))
        config.roomId = "changed-after"
        #expect(driver.machine.prepareConfig?.roomId == MachineDriver.ownRoom)
        #expect(driver.machine.prepareConfig?.callTimeoutMillisecond == 4_321)
        #expect(actions.hasLeave)
        #expect(
            actions.stateChanges == [CallStateChange(state: .prepared, reason: .none, eventReason: "", eventInfo: [:])])
    }

    @Test("The signaling channel is listened to from the first prepareForCall on, after prepared is reported")
    func firstPrepareListensToTheChannel() {
        var driver = MachineDriver(.idleInitialized)
        let first = driver.handle(.prepare(MachineDriver.prepareConfig()))
        #expect(first.last == .listen)
        let reported = first.firstIndex { if case .notifyState = $0 { true } else { false } }
        #expect(reported != nil && first.firstIndex(of: .listen)! > reported!)
        #expect(!driver.handle(.prepare(MachineDriver.prepareConfig())).contains(.listen), "listening already")
        var initialized = MachineDriver(.idleUninitialized)
        #expect(!initialized.handle(.initialize(userId: MachineDriver.selfId)).contains(.listen))
    }

    @Test("accept, reject and hangup naming another user than the call's peer are refused with invalidArgument")
    func wrongPeerIsRefused() {
        for (situation, input) in [
            (MachineDriver.Situation.callingAsCallee, CallInput.accept(remoteUserId: 3)),
            (.callingAsCallee, .reject(remoteUserId: 3, reason: nil)),
            (.connected, .hangup(remoteUserId: 3, reason: nil)),
        ] {
            var driver = MachineDriver(situation)
            let before = driver.machine.call
            let actions = driver.handle(input)
            #expect(actions.error?.code == .invalidArgument)
            #expect(actions.error?.message.contains("3") == true)
            #expect(actions.stateChanges.isEmpty && actions.sent.isEmpty)
            #expect(driver.machine.call == before)
        }
    }

    @Test("call to yourself is refused with a clear error")
    func callArgumentsAreChecked() {
        var driver = MachineDriver(.prepared)
        let selfCall = driver.handle(
            .call(remoteUserId: MachineDriver.selfId, type: .video, extension: nil, callId: "x"))
        #expect(selfCall.error?.code == .invalidArgument)
        #expect(selfCall.error?.message.contains("yourself") == true)
        #expect(driver.machine.state == .prepared)
    }

    @Test("call sends the call message with the own room, reports calling with the message, joins and mutes")
    func callEffects() throws {
        var driver = MachineDriver(.prepared)
        let actions = driver.handle(.call(remoteUserId: 2, type: .audio, extension: nil, callId: "c-1"))
        let sent = try #require(actions.sent.first)
        #expect(sent.to == 2)
        #expect(sent.message.action == .audioCall)
        #expect(sent.message.fromRoomId == MachineDriver.ownRoom)
        #expect(sent.message.remoteUserId == 2)
        #expect(sent.message.callId == "c-1")
        let change = try #require(actions.stateChanges.first)
        #expect(change.state == .calling && change.reason == .localAudioCall)
        #expect(change.eventInfo.string(kFromRoomId) == MachineDriver.ownRoom)
        #expect(change.eventInfo.int(kRemoteUserId) == 2)
        #expect(actions.events == [.localAudioCall, .joinRTCStart])
        let join = try #require(actions.joins.first)
        #expect(join.channel == MachineDriver.ownRoom)
        #expect(join.token == "token-1")
        #expect(join.media == .call(.audio))
        #expect(actions.volumes.map(\.volume) == [0])
        #expect(driver.machine.callId == "c-1")
    }

    @Test("renewToken stores the token for the next join and passes it to a live channel")
    func renewTokenStoresAndPasses() throws {
        var prepared = MachineDriver(.prepared)
        #expect(prepared.handle(.renewToken("fresh")).isEmpty)
        let actions = prepared.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c"))
        #expect(try #require(actions.joins.first).token == "fresh")

        var connected = MachineDriver(.connected)
        #expect(connected.handle(.renewToken("fresher")) == [.renewRTCToken("fresher")])

        let h = CallHarness()
        h.reach(.connected)
        h[1].api.renewToken(with: "renewed")
        #expect(h[1].engine.token == "renewed")
    }
}
