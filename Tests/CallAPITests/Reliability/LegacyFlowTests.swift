import CallAPI
import CallAPITesting
import Testing

/// Every call flow against both legacy flavours, in both directions, at 0 and 300 ms of signaling latency.
/// In every case the legacy endpoint gets no message twice and no action it does not know.
@Suite("Every flow against the deployed clients")
struct LegacyFlowTests {
    enum Direction: String, Sendable, CaseIterable {
        /// Our endpoint calls the legacy one.
        case weCall
        /// The legacy endpoint calls ours.
        case theyCall
    }

    enum Flow: String, Sendable, CaseIterable {
        case acceptCallerHangsUp, acceptCalleeHangsUp, reject, cancel, timeout, busy, audio
        /// A cancel, then a new call from the same caller within 3 s: the new call connects and lives.
        case cancelThenCallAgain
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var flavour: LegacyFlavour
        var direction: Direction
        var latency: Int64
        var flow: Flow
        var testDescription: String { "\(flow) \(direction) \(flavour) \(latency) ms" }

        static let all: [Scenario] = LegacyFlavour.allCases.flatMap { flavour in
            Direction.allCases.flatMap { direction in
                [Int64(0), 300].flatMap { latency in
                    Flow.allCases.map { Scenario(flavour: flavour, direction: direction, latency: latency, flow: $0) }
                }
            }
        }
    }

    /// One side of a call, ours or the legacy one, driven the same way.
    struct Party {
        var name: String
        var place: (CallType) -> Void
        var accept: () -> Void
        var reject: () -> Void
        var cancel: () -> Void
        var hangup: () -> Void
        var state: () -> CallStateType
        var lastReason: () -> CallStateReason?
        var callId: () -> String
        /// The Web client ends its call when the peer leaves the RTC channel, reporting remoteHangup; with
        /// signaling slower than media, that comes before the message that says why.
        var endsOnPeerLeavingChannel = false

        /// It ended its call for `reason`, or, where it ends on the channel hint, for that.
        func ended(_ reason: CallStateReason) -> Bool {
            state() == .prepared
                && (lastReason() == reason || (endsOnPeerLeavingChannel && lastReason() == .remoteHangup))
        }
    }

    static func parties(_ w: LegacyWorld, _ direction: Direction) -> (caller: Party, callee: Party) {
        let ours = Party(
            name: "ours", place: { w.ours.call(remoteUserId: 9, callType: $0, callExtension: [:], completion: nil) },
            accept: { w.ours.accept(remoteUserId: 9, completion: nil) },
            reject: { w.ours.reject(remoteUserId: 9, reason: "no", completion: nil) },
            cancel: { w.ours.cancelCall(completion: nil) },
            hangup: { w.ours.hangup(remoteUserId: 9, reason: nil, completion: nil) }, state: { w.ours.state },
            lastReason: { w.listener.lastState?.reason }, callId: { w.ours.getCallId() })
        let legacy = Party(
            name: "legacy", place: { w.legacy.call(1, type: $0) }, accept: { w.legacy.accept() },
            reject: { w.legacy.reject(reason: "no") }, cancel: { w.legacy.cancel() }, hangup: { w.legacy.hangup() },
            state: { w.legacy.state.type }, lastReason: { w.legacy.stateChanges.last?.reason },
            callId: { w.legacy.state.call?.callId ?? "" }, endsOnPeerLeavingChannel: w.legacy.flavour == .web)
        return direction == .weCall ? (ours, legacy) : (legacy, ours)
    }

    @Test(arguments: Scenario.all)
    func flow(_ s: Scenario) {
        // The caller's ring timer runs out first, so the timeout flow is the caller's.
        let w = LegacyWorld(
            s.flavour, latencyMillis: s.latency, oursTimeout: s.direction == .weCall ? 10_000 : 15_000,
            legacyTimeout: s.direction == .weCall ? 15_000 : 10_000)
        let (caller, callee) = Self.parties(w, s.direction)
        let step = s.latency + 200
        let connect = s.latency + 500

        switch s.flow {
        case .acceptCallerHangsUp, .acceptCalleeHangsUp:
            caller.place(.video)
            w.clock.advance(byMillis: step)
            #expect(callee.state() == .calling)
            callee.accept()
            w.clock.advance(byMillis: connect)
            #expect(caller.state() == .connected)
            #expect(callee.state() == .connected)
            let (hanger, other) = s.flow == .acceptCallerHangsUp ? (caller, callee) : (callee, caller)
            hanger.hangup()
            w.clock.advance(byMillis: step)
            #expect(hanger.lastReason() == .localHangup)
            #expect(other.state() == .prepared)
            #expect(other.lastReason() == .remoteHangup)

        case .reject:
            caller.place(.video)
            w.clock.advance(byMillis: step)
            callee.reject()
            w.clock.advance(byMillis: step)
            #expect(caller.ended(.remoteRejected))
            #expect(callee.lastReason() == .localRejected)

        case .cancel:
            caller.place(.video)
            w.clock.advance(byMillis: step)
            caller.cancel()
            w.clock.advance(byMillis: step)
            #expect(caller.lastReason() == .localCancelled)
            #expect(callee.ended(.remoteCancelled))

        case .timeout:
            caller.place(.video)
            w.clock.advance(byMillis: 10_000 + step)
            #expect(caller.state() == .prepared)
            #expect(caller.lastReason() == .callingTimeout)
            // The Web client has no remoteCallingTimeout: it shows a plain remote cancel.
            let calleeIsWeb = s.direction == .weCall && s.flavour == .web
            #expect(callee.ended(calleeIsWeb ? .remoteCancelled : .remoteCallingTimeout))

        case .busy:
            busy(s, w, caller: caller, callee: callee, roundTrip: 2 * s.latency + 200)

        case .audio:
            caller.place(.audio)
            w.clock.advance(byMillis: step)
            if s.direction == .weCall && !s.flavour.answersAudioCalls {
                // The Web client leaves audio calls unhandled: it never rings, and our ring timer ends ours.
                #expect(w.legacy.stateChanges.isEmpty)
                w.clock.advance(byMillis: 10_000)
                #expect(caller.lastReason() == .callingTimeout)
                #expect(w.legacy.stateChanges.isEmpty)
                break
            }
            #expect(callee.state() == .calling)
            if s.direction == .theyCall { #expect(w.listener.lastState?.reason == .remoteAudioCall) }
            callee.accept()
            w.clock.advance(byMillis: connect)
            #expect(caller.state() == .connected)
            #expect(callee.state() == .connected)
            caller.hangup()
            w.clock.advance(byMillis: step)
            #expect(callee.state() == .prepared)
            #expect(callee.lastReason() == .remoteHangup)

        case .cancelThenCallAgain:
            caller.place(.video)
            w.clock.advance(byMillis: step)
            caller.cancel()
            w.clock.advance(byMillis: 1_000)
            caller.place(.video)
            let secondCall = caller.callId()
            w.clock.advance(byMillis: step)
            #expect(callee.state() == .calling)
            #expect(callee.callId() == secondCall)
            callee.accept()
            w.clock.advance(byMillis: connect)
            #expect(caller.state() == .connected)
            #expect(callee.state() == .connected)
            // Nothing left over from the cancelled call ends the new one.
            w.clock.advance(byMillis: 30_000)
            #expect(caller.state() == .connected)
            #expect(callee.state() == .connected)
            caller.hangup()
            w.clock.advance(byMillis: step)
            #expect(callee.state() == .prepared)
        }

        w.clock.advance(byMillis: 30_000)
        #expect(w.ours.state != .calling && w.ours.state != .connecting)
        if w.ours.state == .prepared { #expect(w.world.engine(userId: 1).isReleased) }
        #expect(w.repeatsSentToLegacy.isEmpty)
        #expect(w.legacy.repeatedMessages.isEmpty)
        #expect(w.legacy.unknownActionsReceived.isEmpty)
    }

    /// The callee is already in a call with user 3 (ours); the caller hears busy, and the call with 3 goes on.
    private func busy(_ s: Scenario, _ w: LegacyWorld, caller: Party, callee: Party, roundTrip step: Int64) {
        if s.direction == .weCall {
            w.legacy.call(3)
        } else {
            w.third.call(remoteUserId: 1, completion: nil)
        }
        w.clock.advance(byMillis: step)
        #expect(w.third.state == .calling)
        let busyCallId = callee.callId()
        caller.place(.video)
        let ourCallId = caller.callId()
        w.clock.advance(byMillis: step)
        #expect(caller.state() == .prepared)
        #expect(caller.lastReason() == .remoteCallBusy)
        #expect(callee.state() == .calling)
        #expect(callee.callId() == busyCallId)
        #expect(w.third.state == .calling)
        if s.direction == .weCall {
            // The deployed clients stamp their busy reject with their own call's id, not ours.
            let rejects = w.network.sentMessages.filter { $0.from == 9 && $0.to == 1 }
            #expect(rejects.count == 1)
            #expect(rejects.first?.text.contains(busyCallId) == true)
            #expect(rejects.first?.text.contains(ourCallId) == false)
            #expect(w.listener.lastState?.eventReason == s.flavour.busyReason)
        }
        // The call with user 3 ends normally.
        if s.direction == .weCall { w.legacy.cancel() } else { w.third.cancelCall(completion: nil) }
        w.clock.advance(byMillis: step)
        #expect(w.third.state == .prepared)
    }
}
