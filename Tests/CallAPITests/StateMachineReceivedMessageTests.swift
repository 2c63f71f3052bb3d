import CallAPITesting
import Testing

@testable import CallAPI

/// The receiver table of call-behaviour.md ("Received messages"), row by row, on the pure machine.
@Suite("Received messages, on the state machine")
struct StateMachineReceivedMessageTests {
    // MARK: call

    @Test(
        "A call in prepared rings: calling(remoteVideoCall / remoteAudioCall) with the message as event info",
        arguments: CallType.allCases)
    func callInPreparedRings(type: CallType) throws {
        var driver = MachineDriver(.prepared)
        let actions = driver.receive(type == .video ? .videoCall : .audioCall, callId: "c-9") {
            $0.fromUserExtension = ["nick": .string("bob")]
        }
        let change = try #require(actions.stateChanges.first)
        #expect(actions.stateChanges.count == 1)
        #expect(change.state == .calling)
        #expect(change.reason == (type == .video ? .remoteVideoCall : .remoteAudioCall))
        #expect(change.eventInfo.int("message_action") == (type == .video ? 0 : 10))
        #expect(change.eventInfo.string(kCallId) == "c-9")
        #expect(change.eventInfo.string(kFromRoomId) == MachineDriver.peerRoom)
        #expect(change.eventInfo.int(kFromUserId) == 2)
        #expect(change.eventInfo.int(kRemoteUserId) == 1)
        #expect(change.eventInfo[kFromUserExtension] == .object(["nick": .string("bob")]))
        #expect(actions.events == [type == .video ? .remoteVideoCall : .remoteAudioCall])
        #expect(actions.hasAskCanJoin)
        #expect(actions.sent.isEmpty)
        #expect(driver.machine.state == .calling)
        #expect(driver.machine.callId == "c-9")
        #expect(driver.machine.call?.isCaller == false)
        #expect(driver.machine.call?.stage == .ringing)
        #expect(driver.machine.call?.room == MachineDriver.peerRoom)

        let join = driver.handle(.earlyJoinDecided(callId: "c-9", allowed: true))
        #expect(join.joins.map(\.channel) == [MachineDriver.peerRoom])
        #expect(join.joins.first?.media == .call(type))
        #expect(join.volumes.map(\.uid) == [2] && join.volumes.map(\.volume) == [0], "remote playback muted")
    }

    @Test("The calling state is reported before the callee joins RTC, and the caller's before its join")
    func callingIsReportedBeforeJoin() throws {
        var caller = MachineDriver(.prepared)
        let placed = caller.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c"))
        let stateIndex = try #require(placed.firstIndex { if case .notifyState = $0 { true } else { false } })
        let joinIndex = try #require(placed.firstIndex { $0.isJoin })
        #expect(stateIndex < joinIndex)

        var callee = MachineDriver(.prepared)
        let rang = callee.receive(.videoCall, callId: "c")
        #expect(rang.states == [.calling])
        #expect(!rang.hasJoin, "joins only after the listeners were asked, i.e. after calling")
    }

    @Test(
        "A call from another user while in a call is rejected as busy; nothing else changes",
        arguments: [
            MachineDriver.Situation.callingAsCaller, .callingAsCallee, .connecting, .connected, .connectingAsCallee,
            .connectedAsCallee,
        ])
    func callFromOtherUserIsBusy(situation: MachineDriver.Situation) throws {
        var driver = MachineDriver(situation)
        let before = driver.machine.call
        let actions = driver.receive(.videoCall, callId: "c-3", from: MachineDriver.otherId)
        let reply = try #require(actions.sent.first)
        #expect(actions.sent.count == 1)
        #expect(reply.to == MachineDriver.otherId)
        #expect(reply.message.action == .reject)
        #expect(reply.message.callId == "c-3")
        #expect(reply.message.rejectByInternal)
        #expect(reply.message.rejectReason == "The user is currently busy")
        #expect(reply.message.fields["rejectByInternal"] == .int(1))
        #expect(actions.stateChanges.isEmpty && actions.events.isEmpty)
        #expect(!actions.contains { $0.isLeave || $0.isJoin || $0.isStopTimer })
        #expect(driver.machine.state == situation.state)
        #expect(driver.machine.call == before)
    }

    @Test(
        "A call in idle or failed is ignored",
        arguments: [MachineDriver.Situation.idleUninitialized, .idleInitialized, .failed])
    func callInIdleOrFailedIsIgnored(situation: MachineDriver.Situation) {
        var driver = MachineDriver(situation)
        let actions = driver.receive(.videoCall, callId: "c-x")
        #expect(actions.onlyLogs)
        #expect(driver.machine.state == situation.state)
        #expect(driver.machine.callId == "")
    }

    @Test("A call from the same user while it rings here updates the call's room and id without a new notification")
    func recallUpdatesRoomAndId() {
        var driver = MachineDriver(.callingAsCallee)
        let actions = driver.receive(.videoCall, callId: "call-again") { $0.fromRoomId = "room-2b" }
        #expect(actions.stateChanges.isEmpty)
        #expect(!actions.events.contains(.remoteVideoCall))
        #expect(actions.sent.isEmpty, "no busy reply to the peer itself")
        #expect(driver.machine.callId == "call-again")
        #expect(driver.machine.call?.room == "room-2b")
        #expect(actions.joins.map(\.channel) == ["room-2b"], "already joined at ring: moves to the new room")
        #expect(driver.machine.state == .calling)
    }

    @Test("A recall in the same room keeps the first frame already seen, so accepting connects")
    func recallKeepsFirstFrame() {
        var driver = MachineDriver(.callingAsCallee)
        driver.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: MachineDriver.peerRoom, uid: 2)))
        driver.receive(.videoCall, callId: "call-again")
        #expect(driver.handle(.accept(remoteUserId: 2)).states == [.connecting, .connected])

        var moved = MachineDriver(.callingAsCallee)
        moved.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: MachineDriver.peerRoom, uid: 2)))
        moved.receive(.videoCall, callId: "call-again") { $0.fromRoomId = "room-2b" }
        #expect(moved.handle(.accept(remoteUserId: 2)).states == [.connecting], "a new room: wait for its frame")
    }

    @Test("A call addressed to another user is ignored")
    func callForSomeoneElseIsIgnored() {
        var driver = MachineDriver(.prepared)
        let actions = driver.receive(.videoCall, callId: "c") { $0.remoteUserId = 7 }
        #expect(actions.onlyLogs)
        #expect(driver.machine.state == .prepared)
    }

    // MARK: cancel

    @Test(
        "Cancel of the current call: prepared(remoteCancelled), or remoteCallingTimeout when by the timer",
        arguments: [false, true])
    func cancelEndsTheRingingCall(byTimer: Bool) throws {
        var driver = MachineDriver(.callingAsCallee)
        let actions = driver.receive(.cancelCall, callId: MachineDriver.peerCallId) {
            $0.cancelCallByInternal = byTimer
        }
        let change = try #require(actions.stateChanges.last)
        #expect(change.state == .prepared)
        #expect(change.reason == (byTimer ? .remoteCallingTimeout : .remoteCancelled))
        #expect(change.eventInfo.int(kCancelCallByInternal) == (byTimer ? 1 : 0))
        #expect(actions.events.contains(byTimer ? .remoteCallingTimeout : .remoteCancelled))
        #expect(actions.hasLeave)
        #expect(actions.hasStopTimer)
        #expect(actions.sent.isEmpty)
        #expect(driver.machine.callId == "")
    }

    @Test("Cancel also ends the call in connecting (it crossed the accept)")
    func cancelInConnecting() {
        var driver = MachineDriver(.callingAsCallee)
        driver.handle(.accept(remoteUserId: 2))
        #expect(driver.machine.state == .connecting)
        let actions = driver.receive(.cancelCall, callId: MachineDriver.peerCallId)
        #expect(actions.reasons == [.remoteCancelled])
        #expect(driver.machine.state == .prepared)
    }

    // MARK: accept

    @Test("Accept for the caller: connecting(remoteAccepted), event remoteAccepted, then waits for the first frame")
    func acceptMakesCallerConnecting() throws {
        var driver = MachineDriver(.callingAsCaller)
        let actions = driver.receive(.accept, callId: MachineDriver.ownCallId)
        #expect(actions.stateChanges.map { StateReason($0.state, $0.reason) } == [.init(.connecting, .remoteAccepted)])
        #expect(actions.events == [.remoteAccepted])
        #expect(driver.machine.state == .connecting)
        #expect(driver.machine.call?.stage == .connecting)
    }

    @Test("Accept is only acted on in calling by the caller")
    func acceptElsewhereIsIgnored() {
        for situation in [MachineDriver.Situation.callingAsCallee, .connecting, .connected] {
            var driver = MachineDriver(situation)
            let callId = situation == .callingAsCallee ? MachineDriver.peerCallId : MachineDriver.ownCallId
            let before = driver.machine.call
            let actions = driver.receive(.accept, callId: callId)
            #expect(actions.onlyLogs, "\(situation)")
            #expect(driver.machine.call == before)
            #expect(driver.machine.state == situation.state)
        }
    }

    // MARK: reject

    @Test(
        "Reject of the current call: prepared(remoteRejected) with its reason, or remoteCallBusy when internal",
        arguments: [false, true])
    func rejectEndsTheCall(busy: Bool) throws {
        var driver = MachineDriver(.callingAsCaller)
        let actions = driver.receive(.reject, callId: MachineDriver.ownCallId) {
            $0.rejectByInternal = busy
            $0.rejectReason = busy ? kRejectReasonCallBusy : "not now"
        }
        let change = try #require(actions.stateChanges.last)
        #expect(change.state == .prepared)
        #expect(change.reason == (busy ? .remoteCallBusy : .remoteRejected))
        #expect(change.eventReason == (busy ? kRejectReasonCallBusy : "not now"))
        #expect(change.eventInfo.int(kRejectByInternal) == (busy ? 1 : 0))
        #expect(change.eventInfo.string(kRejectReason) == (busy ? kRejectReasonCallBusy : "not now"))
        #expect(actions.events.contains(busy ? .remoteCallBusy : .remoteRejected))
        #expect(actions.hasLeave)
        #expect(driver.machine.callId == "")
    }

    // MARK: hangup

    @Test("Hangup in connecting: prepared(remoteHangup), no onCallDisconnected")
    func hangupInConnecting() {
        var driver = MachineDriver(.connecting)
        let actions = driver.receive(.hangup, callId: MachineDriver.ownCallId) { $0.hangupReason = "gone" }
        #expect(actions.reasons == [.remoteHangup])
        #expect(actions.eventReason(of: .remoteHangup) == "gone")
        #expect(actions.hasLeave)
        #expect(actions.disconnects.isEmpty)
    }

    @Test("Hangup in connected: prepared(remoteHangup) and onCallDisconnected by the peer with the duration")
    func hangupInConnected() throws {
        var driver = MachineDriver(.connected)
        driver.advance(4_200)
        let actions = driver.receive(.hangup, callId: MachineDriver.ownCallId)
        #expect(actions.reasons == [.remoteHangup])
        #expect(actions.events.contains(.remoteHangup))
        let disconnect = try #require(actions.disconnects.first)
        #expect(disconnect.room == MachineDriver.ownRoom)
        #expect(disconnect.hangupUserId == MachineDriver.peerId)
        #expect(disconnect.duration == 4_200)
    }

    // MARK: messages that are not for the current call

    @Test(
        "Cancel, accept, reject and hangup from another user or for another call are ignored",
        arguments: [MessageAction.cancelCall, .accept, .reject, .hangup])
    func messagesForOtherCallsAreIgnored(action: MessageAction) {
        for situation in [MachineDriver.Situation.callingAsCaller, .connected] {
            var driver = MachineDriver(situation)
            let before = driver.machine.call
            let fromOther = driver.receive(action, callId: MachineDriver.ownCallId, from: MachineDriver.otherId)
            let otherCall = driver.receive(action, callId: "another-call")
            #expect(fromOther.onlyLogs && otherCall.onlyLogs, "\(situation)")
            #expect(driver.machine.call == before)
        }
    }

    @Test(
        "Cancel, reject and hangup in prepared are ignored",
        arguments: [MessageAction.cancelCall, .reject, .hangup, .accept])
    func endingMessagesWithoutACallAreIgnored(action: MessageAction) {
        var driver = MachineDriver(.prepared)
        let actions = driver.receive(action, callId: "c")
        #expect(actions.onlyLogs)
        #expect(driver.machine.state == .prepared)
    }

    // MARK: dropped texts

    static let badTexts: [String] = [
        "",
        "not json",
        "[1, 2]",
        "\"text\"",
        #"{"message_action":4,"message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_action":4,"message_version":"2.0","message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_action":4,"message_version":1.0,"message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_action":5,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_action":99,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_action":"4","message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_action":4,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":2}"#,
        #"{"message_action":4,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":2,"callId":""}"#,
        #"{"message_action":4,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":"2","callId":"call-own"}"#,
        #"{"message_action":4,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":-2,"callId":"call-own"}"#,
        // (Without "messageId" a message is acted on: the Web client never sends one. DeployedClientWireTests.)
        #"{"message_action":4,"message_version":"1.0","messageId":1,"fromUserId":2,"callId":"call-own"}"#,
        #"{"message_action":4,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"call-own","hangupReason":7}"#,
    ]

    @Test(
        "Malformed, wrong-version and unknown-action texts are dropped with a log; the call goes on",
        arguments: badTexts)
    func badTextsAreDropped(text: String) {
        var driver = MachineDriver(.connected)
        driver.advance(10)
        let before = driver.machine.call
        let actions = driver.receive(text: text, from: MachineDriver.peerId)
        #expect(actions.onlyLogs)
        #expect(!actions.isEmpty, "dropped with a debug log")
        #expect(driver.machine.call == before)
        #expect(driver.machine.state == .connected)
        // A well-formed hangup afterwards still works: the drop did not consume it.
        let hangup = driver.receive(.hangup, callId: MachineDriver.ownCallId)
        #expect(hangup.reasons == [.remoteHangup])
    }

    @Test("Bad call texts do not ring")
    func badCallTextsDoNotRing() {
        let texts = [
            #"{"message_action":0,"message_version":"1.0","message_timestamp":1767225600000,"messageId":1,"fromUserId":2,"callId":"c","remoteUserId":1}"#,
            #"{"message_action":0,"message_version":"1.0","message_timestamp":1767225600000,"messageId":1,"fromUserId":2,"callId":"c","fromRoomId":"r"}"#,
            #"{"message_action":10,"message_version":"0.9","message_timestamp":1767225600000,"messageId":1,"fromUserId":2,"callId":"c","remoteUserId":1,"fromRoomId":"r"}"#,
            #"{"message_action":0,"message_version":"1.0","message_timestamp":1767225600000,"messageId":1,"fromUserId":2,"callId":"c","remoteUserId":1,"fromRoomId":"r","fromUserExtension":"x"}"#,
        ]
        for text in texts {
            var driver = MachineDriver(.prepared)
            let actions = driver.receive(text: text, from: 2)
            #expect(actions.onlyLogs, "\(text)")
            #expect(driver.machine.state == .prepared)
        }
    }

    @Test("A message that says it is from this user is dropped")
    func messageFromSelfIsDropped() {
        var driver = MachineDriver(.prepared)
        let actions = driver.receive(.videoCall, callId: "c", from: MachineDriver.selfId)
        #expect(actions.onlyLogs)
        #expect(driver.machine.state == .prepared)
    }
}

/// The receiver table again, end to end: two CallApiImpl endpoints over the in-memory network.
@Suite("Received messages, between two endpoints")
struct ReceivedMessageFlowTests {
    @Test("The callee rings with the call message as event info and the caller's room", arguments: CallType.allCases)
    func calleeRings(type: CallType) throws {
        let h = CallHarness()
        #expect(
            h[1].api.probe { $0.call(remoteUserId: 2, callType: type, callExtension: [:], completion: $1) }.succeeded)
        let ring = try #require(h[2].listener.stateRecords.first)
        #expect(ring.state == .calling)
        #expect(ring.reason == (type == .video ? .remoteVideoCall : .remoteAudioCall))
        #expect(ring.eventInfo.string(kFromRoomId) == "room-1")
        #expect(ring.eventInfo.int(kFromUserId) == 1)
        #expect(ring.eventInfo.int(kRemoteUserId) == 2)
        #expect(ring.eventInfo.string(kCallId) == h[1].api.getCallId())
        #expect(h[2].listener.events.first == (type == .video ? .remoteVideoCall : .remoteAudioCall))
        #expect(h[2].engine.channel == "room-1")
        #expect(h[1].listener.events.contains(.remoteUserRecvCall))
    }

    @Test("Cancel by the caller: the callee goes prepared(remoteCancelled)")
    func cancel() {
        let h = CallHarness()
        h.reach(.callingAsCaller)
        #expect(h[1].api.probe { $0.cancelCall(completion: $1) }.succeeded)
        #expect(h[1].listener.stateReasons == [.init(.prepared, .localCancelled)])
        #expect(h[1].listener.events.contains(.localCancelled))
        #expect(h[2].listener.stateReasons == [.init(.prepared, .remoteCancelled)])
        #expect(h[2].listener.events.contains(.remoteCancelled))
        #expect(h.messages(from: 1, to: 2).last?.action == .cancelCall)
        #expect(h.messages(from: 1, to: 2).last?.cancelCallByInternal == false)
    }

    @Test("Accept: the callee goes connecting(localAccepted), the caller connecting(remoteAccepted), both connect")
    func accept() {
        let h = CallHarness.situations()
        h.reach(.callingAsCaller)
        #expect(h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }.succeeded)
        #expect(h[2].listener.stateReasons == [.init(.connecting, .localAccepted)])
        #expect(h[1].listener.stateReasons == [.init(.connecting, .remoteAccepted)])
        #expect(h[1].listener.events.contains(.remoteAccepted))
        #expect(h[2].listener.events.contains(.localAccepted))
        h.clock.advance(byMillis: 1_000)
        #expect(h[1].api.state == .connected)
        #expect(h[2].api.state == .connected)
    }

    @Test("Reject by the callee: the caller goes prepared(remoteRejected) with the reason")
    func reject() throws {
        let h = CallHarness()
        h.reach(.callingAsCaller)
        #expect(h[2].api.probe { $0.reject(remoteUserId: 1, reason: "in a meeting", completion: $1) }.succeeded)
        #expect(h[2].listener.stateReasons == [.init(.prepared, .localRejected)])
        #expect(h[2].listener.events.contains(.localRejected))
        let last = try #require(h[1].listener.lastState)
        #expect(StateReason(last.state, last.reason) == .init(.prepared, .remoteRejected))
        #expect(last.eventReason == "in a meeting")
        #expect(last.eventInfo.int(kRejectByInternal) == 0)
        #expect(h[1].listener.events.contains(.remoteRejected))
        #expect(h[1].listener.reason(of: .remoteRejected) == "in a meeting")
    }

    @Test("Hangup in connected: both prepared, both told onCallDisconnected with who hung up")
    func hangup() {
        let h = CallHarness()
        h.reach(.connected)
        h.clock.advance(byMillis: 2_500)
        #expect(h[2].api.probe { $0.hangup(remoteUserId: 1, reason: "done", completion: $1) }.succeeded)
        #expect(h[2].listener.stateReasons == [.init(.prepared, .localHangup)])
        #expect(h[1].listener.stateReasons == [.init(.prepared, .remoteHangup)])
        #expect(h[1].listener.reason(of: .remoteHangup) == "done")
        #expect(h.messages(from: 2, to: 1).last?.hangupReason == "done")
        #expect(
            h[1].listener.records.contains(
                .disconnected(roomId: "room-1", hangupUserId: 2, currentUserId: 1, duration: 2_500)))
        #expect(
            h[2].listener.records.contains(
                .disconnected(roomId: "room-1", hangupUserId: 2, currentUserId: 2, duration: 2_500)))
    }

    @Test("Hangup in connecting ends the call without onCallDisconnected")
    func hangupInConnecting() {
        let h = CallHarness.situations()
        h.reach(.connecting)
        #expect(h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }.succeeded)
        #expect(h[1].listener.stateReasons == [.init(.prepared, .localHangup)])
        #expect(h[2].listener.stateReasons == [.init(.prepared, .remoteHangup)])
        #expect(h[1].listener.disconnectCount == 0)
        #expect(h[2].listener.disconnectCount == 0)
    }

    @Test("A bad text delivered to an endpoint in a call is dropped and the call goes on")
    func badTextThroughTheShell() {
        let h = CallHarness()
        h.reach(.connected)
        for text in StateMachineReceivedMessageTests.badTexts {
            h.network.client(userId: 1).sendMessage(userId: "2", message: text, completion: nil)
        }
        #expect(h[2].api.state == .connected)
        #expect(h[2].listener.stateRecords.isEmpty)
        #expect(!h[2].listener.logs.isEmpty)
    }

    @Test("Accept crossing a cancel: the caller ignores the accept, the callee ends on the cancel")
    func acceptCrossesCancel() {
        let h = CallHarness()
        h.reach(.callingAsCaller)
        h.network.inject(.hold, from: 1, to: 2)
        _ = h[1].api.probe { $0.cancelCall(completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].api.state == .prepared, "the accept of a cancelled call is ignored")
        #expect(h[1].listener.stateReasons == [.init(.prepared, .localCancelled)])
        h.network.releaseHeld()
        #expect(h[2].listener.lastState.map { StateReason($0.state, $0.reason) } == .init(.prepared, .remoteCancelled))
        #expect(h[1].engine.isReleased && h[2].engine.isReleased)
    }

    @Test("The peer calls again while connected (it restarted): the old call ends, the new one rings")
    func peerCallsAgainWhileConnected() {
        let h = CallHarness()
        h.reach(.connected)
        let old = h[2].api.getCallId()
        let restarted = CallMessage(
            action: .videoCall, timestamp: h.clock.nowMillis(), messageId: 1, fromUserId: 1, callId: "after-restart",
            remoteUserId: 2, fromRoomId: "room-1")
        h.network.client(userId: 1).sendMessage(userId: "2", message: restarted.encoded(), completion: nil)
        #expect(
            h[2].listener.stateReasons == [.init(.prepared, .remoteHangup), .init(.calling, .remoteVideoCall)])
        #expect(h[2].listener.disconnectCount == 1)
        #expect(h[2].api.getCallId() == "after-restart")
        #expect(h[2].api.getCallId() != old)
    }
}
