// libFuzzer target: arbitrary bytes as a received message, fed to a CallStateMachine in every state.
//
// Input layout: byte 0 picks the state (see `MachineStates.all`), byte 1 how the channel delivers it
// (bit 0: it vouches for the sender; bit 1: with a receive time; bits 2-3: which sender id text; bit 4:
// extreme clock values), the rest is the message text. After the message, every timer the machine asked
// for fires, so follow-on handling runs on what the message left behind.

import CallAPIWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCallMessage(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard bytes.count >= 2 else { return 0 }
    var machine = MachineStates.all[Int(bytes[0]) % MachineStates.all.count]
    let mode = bytes[1]
    let text = String(decoding: bytes.dropFirst(2), as: UTF8.self)
    let extreme = mode & 0x10 != 0
    let now = extreme ? Int64.max - 1 : MachineStates.start + 1_000
    let senderTexts = ["2", "02", "+2", "18446744073709551615"]
    let sender =
        mode & 0x01 == 0
        ? nil
        : SignalSender(
            userId: senderTexts[Int(mode >> 2) & 0x03],
            receivedAtMillis: mode & 0x02 == 0 ? nil : (extreme ? Int64.min : MachineStates.start))
    let actions = machine.handle(.received(text: text, sender: sender), now: now)
    fireTimers(of: actions, in: &machine, now: now)
    return 0
}

/// Fires each timer the actions start, once, in order, as the shell would.
private func fireTimers(of actions: [CallAction], in machine: inout CallStateMachine, now: Int64) {
    for action in actions {
        switch action {
        case .startTimer(let timer, let millis):
            _ = machine.handle(.timerFired(timer), now: now.saturatingPlus(millis))
        case .send(let message, let to, _):
            _ = machine.handle(.sendFinished(message, to: to, error: nil), now: now)
        default:
            break
        }
    }
}

/// A machine driven into each state it can be in, built once.
enum MachineStates {
    static let start: Int64 = 1_767_225_600_000
    static let me: UInt = 1
    static let peer: UInt = 2

    static let all: [CallStateMachine] = {
        var states: [CallStateMachine] = []
        var idle = CallStateMachine()
        states.append(idle)
        _ = idle.handle(.initialize(userId: me), now: start)
        states.append(idle)
        var prepared = idle
        _ = prepared.handle(
            .prepare(PrepareConfig(roomId: "room-1", rtcToken: "t", callTimeoutMillisecond: 15_000)), now: start)
        states.append(prepared)
        for reliablePeer in [false, true] {
            // Caller side: calling, connecting (accepted, waiting for the first frame), connected.
            var caller = prepared
            _ = caller.handle(.call(remoteUserId: peer, type: .video, extension: nil, callId: "c1"), now: start)
            states.append(caller)
            _ = caller.handle(
                .received(text: message(.accept, callId: "c1", reliable: reliablePeer), sender: nil), now: start)
            states.append(caller)
            _ = caller.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: "room-1", uid: peer)), now: start)
            states.append(caller)
            // Callee side: calling, connecting, connected.
            var callee = prepared
            let call = message(.videoCall, callId: "c2", reliable: reliablePeer)
            _ = callee.handle(.received(text: call, sender: SignalSender(userId: "2")), now: start)
            _ = callee.handle(.earlyJoinDecided(callId: "c2", allowed: true), now: start)
            states.append(callee)
            _ = callee.handle(.accept(remoteUserId: peer), now: start)
            states.append(callee)
            _ = callee.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: "room-2", uid: peer)), now: start)
            states.append(callee)
        }
        var failed = prepared
        _ = failed.handle(.call(remoteUserId: peer, type: .audio, extension: nil, callId: "c3"), now: start)
        _ = failed.handle(.rtc(.joinFailed(channel: "room-1", code: 17, message: "no")), now: start)
        states.append(failed)
        let covered = Set(states.map(\.state))
        precondition(covered == Set(CallStateType.allCases), "fuzz setup misses states: \(covered)")
        return states
    }()

    private static func message(_ action: MessageAction, callId: String, reliable: Bool) -> String {
        CallMessage(
            action: action, timestamp: start, messageId: 1, fromUserId: peer, callId: callId, remoteUserId: me,
            fromRoomId: "room-2", reliable: reliable
        ).encoded()
    }
}
