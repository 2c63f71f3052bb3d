import CallAPITesting
import Foundation
import Testing

@testable import CallAPI

/// call-behaviour.md, "Leaving a call": every path back to prepared, idle or failed leaves the room, stops
/// preview, releases both canvases, stops the timer and clears the current call.
@Suite("Leaving a call")
struct LeavingCallTests {
    enum Exit: String, CaseIterable, CustomStringConvertible {
        case callerCancels, callerHangsUpWhileRinging, calleeRejects, calleeHangsUpWhileRinging
        case hangupInConnecting, callerHangsUpConnected, calleeHangsUpConnected
        case callerTimesOut, calleeTimesOut, callerDeinitializes, calleeDeinitializesConnected, joinFails
        case callerReprepares
        var description: String { rawValue }
    }

    @Test("Every way out of a call releases RTC on both sides and clears the call", arguments: Exit.allCases)
    func everyExitReleases(exit: Exit) {
        let h = CallHarness(
            timing: .init(firstFrameLatencyMillis: exit == .hangupInConnecting ? 1_000 : 0),
            prepare: PrepareConfig(callTimeoutMillisecond: 5_000))
        if exit == .calleeTimesOut { h.reprepare(1) { $0.callTimeoutMillisecond = 0 } }
        if exit == .callerTimesOut { h.reprepare(2) { $0.callTimeoutMillisecond = 0 } }
        switch exit {
        case .callerCancels:
            h.reach(.callingAsCaller)
            _ = h[1].api.probe { $0.cancelCall(completion: $1) }
        case .callerHangsUpWhileRinging:
            h.reach(.callingAsCaller)
            _ = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        case .calleeRejects:
            h.reach(.callingAsCaller)
            _ = h[2].api.probe { $0.reject(remoteUserId: 1, reason: nil, completion: $1) }
        case .calleeHangsUpWhileRinging:
            h.reach(.callingAsCaller)
            _ = h[2].api.probe { $0.hangup(remoteUserId: 1, reason: nil, completion: $1) }
        case .hangupInConnecting:
            h.reach(.connecting)
            _ = h[2].api.probe { $0.hangup(remoteUserId: 1, reason: nil, completion: $1) }
        case .callerHangsUpConnected:
            h.reach(.connected)
            _ = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        case .calleeHangsUpConnected:
            h.reach(.connected)
            _ = h[2].api.probe { $0.hangup(remoteUserId: 1, reason: nil, completion: $1) }
        case .callerTimesOut, .calleeTimesOut:
            h.reach(.callingAsCaller)
            h.clock.advance(byMillis: 5_000)
        case .callerDeinitializes:
            h.reach(.callingAsCaller)
            h[1].api.deinitialize {}
        case .calleeDeinitializesConnected:
            h.reach(.connected)
            h[2].api.deinitialize {}
        case .joinFails:
            h.reach(.failed)
        case .callerReprepares:
            h.reach(.failed)
            _ = h[1].api.probe {
                $0.prepareForCall(prepareConfig: PrepareConfig(roomId: "room-1"), completion: $1)
            }
        }
        for user: UInt in [1, 2] {
            let engine = h[user].engine
            #expect(!h[user].api.state.isInCall, "user \(user)")
            #expect(engine.channel == nil, "user \(user) left the room")
            #expect(!engine.isPreviewing, "user \(user) stopped preview")
            #expect(engine.localCanvas == nil, "user \(user) released the local canvas")
            #expect(engine.remoteCanvases.isEmpty, "user \(user) released the remote canvas")
            #expect(engine.isReleased)
            #expect(h[user].api.getCallId() == "")
        }
        #expect(h.world.occupiedChannels.isEmpty)
        let recorded = [h[1].listener.records.count, h[2].listener.records.count]
        h.clock.advance(byMillis: 120_000)
        #expect([h[1].listener.records.count, h[2].listener.records.count] == recorded, "no timer fires afterwards")
    }

    @Test("The machine's every exit stops the timer and leaves RTC with the peer's canvas")
    func machineExits() {
        let cases: [(MachineDriver.Situation, CallInput)] = [
            (.callingAsCaller, .cancel),
            (.callingAsCallee, .reject(remoteUserId: 2, reason: nil)),
            (.connecting, .hangup(remoteUserId: 2, reason: nil)),
            (.connected, .hangup(remoteUserId: 2, reason: nil)),
            (.callingAsCaller, .timerFired(.ring(callId: MachineDriver.ownCallId))),
            (.connected, .deinitialize),
            (.callingAsCaller, .rtc(.joinFailed(channel: MachineDriver.ownRoom, code: 1, message: "x"))),
        ]
        for (situation, input) in cases {
            var driver = MachineDriver(situation)
            let actions = driver.handle(input)
            #expect(actions.hasStopTimer, "\(situation) \(input)")
            #expect(actions.contains(.leaveRTC(remoteUid: MachineDriver.peerId)), "\(situation) \(input)")
            #expect(driver.machine.call == nil)
            #expect(driver.machine.callId == "")
        }
    }

    @Test("Remote audio is muted from the join until connected, then played at 100")
    func remoteAudioMutedUntilConnected() {
        let h = CallHarness(timing: .init(firstFrameLatencyMillis: 500))
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h[1].engine.playbackVolume(of: 2) == 0)
        #expect(h[2].engine.playbackVolume(of: 1) == 0)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].engine.playbackVolume(of: 2) == 0, "still muted in connecting")
        #expect(h[2].engine.playbackVolume(of: 1) == 0)
        h.clock.advance(byMillis: 500)
        #expect(h[1].api.state == .connected)
        #expect(h[1].engine.playbackVolume(of: 2) == 100)
        #expect(h[2].engine.playbackVolume(of: 1) == 100)
    }

    @Test("The caller publishes camera and microphone, subscribes to both, and shows preview with the canvases")
    func callerMedia() throws {
        let h = CallHarness(canJoinRtcOnCalling: false)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(
            h[1].engine.media
                == RTCMediaOptions(
                    publishMicrophone: true, publishCamera: true, subscribeAudio: true, subscribeVideo: true))
        #expect(h[1].engine.isPreviewing)
        #expect(h[1].engine.localCanvas === h[1].localView)
        #expect(h[1].engine.remoteCanvases[2] === h[1].remoteView)
        #expect(h[1].engine.token == "token-1")
    }

    @Test("getCallId is the call's id while calling, connecting and connected on both sides, else empty")
    func getCallIdLifecycle() throws {
        let h = CallHarness(timing: .init(firstFrameLatencyMillis: 100))
        #expect(h[1].api.getCallId() == "" && h[2].api.getCallId() == "")
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        let id = h[1].api.getCallId()
        #expect(UUID(uuidString: id) != nil, "a UUID made by the caller: \(id)")
        #expect(h[2].api.getCallId() == id)
        #expect(h.messages(from: 1, to: 2).first?.callId == id)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].api.state == .connecting)
        #expect(h[1].api.getCallId() == id && h[2].api.getCallId() == id)
        h.clock.advance(byMillis: 100)
        #expect(h[1].api.state == .connected)
        #expect(h[1].api.getCallId() == id && h[2].api.getCallId() == id)
        _ = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        #expect(h[1].api.getCallId() == "" && h[2].api.getCallId() == "")
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h[1].api.getCallId() != id, "each call gets a new id")
        #expect(!h[1].api.getCallId().isEmpty)
    }

    @Test("onCallConnected and onCallDisconnected carry the durations on the manual clock")
    func connectedDisconnectedDurations() {
        let h = CallHarness(timing: .init(firstFrameLatencyMillis: 250))
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        h.clock.advance(byMillis: 1_000)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].api.state == .connected, "frames were in before the accept")
        h.clock.advance(byMillis: 61_234)
        _ = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        #expect(h[1].listener.records.contains(.connected(roomId: "room-1", callUserId: 1, currentUserId: 1)))
        #expect(
            h[1].listener.records.contains(
                .disconnected(roomId: "room-1", hangupUserId: 1, currentUserId: 1, duration: 61_234)))
        #expect(
            h[2].listener.records.contains(
                .disconnected(roomId: "room-1", hangupUserId: 1, currentUserId: 2, duration: 61_234)))
        #expect(h[1].listener.disconnectCount == 1 && h[2].listener.disconnectCount == 1)
    }

    @Test("onCallConnected and onCallDisconnected carry the engine's NTP time")
    func ntpTimestamps() {
        let h = CallHarness()
        let times = TimestampListener()
        h[2].api.addListener(listener: times)
        h.reach(.connected)
        let connectedAt = UInt64(h.clock.nowMillis())
        h.clock.advance(byMillis: 3_000)
        _ = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        #expect(times.connected == [connectedAt])
        #expect(times.disconnected == [connectedAt + 3_000])
        #expect(times.durations == [3_000])
    }
}

final class TimestampListener: CallApiListenerProtocol {
    private let state = Locked<(connected: [UInt64], disconnected: [UInt64], durations: [UInt64])>(([], [], []))
    var connected: [UInt64] { state.withLock { $0.connected } }
    var disconnected: [UInt64] { state.withLock { $0.disconnected } }
    var durations: [UInt64] { state.withLock { $0.durations } }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {}

    func onCallConnected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64) {
        state.withLock { $0.connected.append(timestamp) }
    }

    func onCallDisconnected(
        roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64
    ) {
        state.withLock {
            $0.disconnected.append(timestamp)
            $0.durations.append(duration)
        }
    }
}
