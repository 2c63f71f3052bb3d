import CallAPI
import CallAPITesting
import Foundation

/// A minimal wire-format-1.0 endpoint written straight from `wire-format.md`, standing in for the existing
/// iOS/Android/Web clients: no acknowledgements, no keep-alives, no de-duplication, `fromUserId` from the
/// body, messages matched by user only.
final class LegacyCallPeer: ISignalClientListener {
    struct State: Sendable {
        var state: CallStateType = .prepared
        var peer: UInt?
        var callId: String?
        var room: String?
        var received: [Int] = []
    }

    let userId: UInt
    let roomId: String
    private let client: any ISignalClient
    private let engine: SimulatedRTCEngine
    private let clock: any CallClock
    private let state = Locked(State())
    private let nextId = Locked(0)

    init(userId: UInt, network: InMemorySignalNetwork, world: SimulatedRTCWorld) {
        self.userId = userId
        roomId = "legacy-room-\(userId)"
        client = network.client(userId: userId)
        engine = world.engine(userId: userId)
        clock = network.clock
        client.addListener(listener: self)
    }

    var current: State { state.withLock { $0 } }

    // MARK: - Local actions (what the app would do)

    func call(_ remote: UInt, video: Bool = true) {
        let callId = UUID().uuidString
        state.withLock {
            $0 = State(state: .calling, peer: remote, callId: callId, room: roomId, received: $0.received)
        }
        engine.joinChannel(roomId, token: "", uid: userId, media: .call(video ? .video : .audio))
        send(video ? 0 : 10, to: remote, callId: callId, extra: ["remoteUserId": remote, "fromRoomId": roomId])
    }

    func accept() {
        guard let (peer, callId, room) = state.withLock({ s in s.peer.map { ($0, s.callId!, s.room!) } }) else {
            return
        }
        state.withLock { $0.state = .connecting }
        engine.joinChannel(room, token: "", uid: userId, media: .call(.video))
        send(2, to: peer, callId: callId)
    }

    func reject(reason: String = "no") {
        guard let (peer, callId) = state.withLock({ s in s.peer.map { ($0, s.callId!) } }) else { return }
        end()
        send(3, to: peer, callId: callId, extra: ["rejectReason": reason, "rejectByInternal": 0])
    }

    func cancel() {
        guard let (peer, callId) = state.withLock({ s in s.peer.map { ($0, s.callId!) } }) else { return }
        end()
        send(1, to: peer, callId: callId, extra: ["cancelCallByInternal": 0])
    }

    func hangup() {
        guard let (peer, callId) = state.withLock({ s in s.peer.map { ($0, s.callId!) } }) else { return }
        end()
        send(4, to: peer, callId: callId, extra: ["hangupReason": "bye"])
    }

    private func end() {
        engine.leaveChannel()
        state.withLock { $0 = State(received: $0.received) }
    }

    private func send(_ action: Int, to user: UInt, callId: String, extra: [String: Any] = [:]) {
        let id = nextId.withLock { id -> Int in
            id += 1
            return id
        }
        var object: [String: Any] = [
            "message_action": action, "message_version": "1.0", "message_timestamp": Int(clock.nowMillis()),
            "messageId": id, "fromUserId": userId, "callId": callId,
        ]
        object.merge(extra) { _, new in new }
        let data = try! JSONSerialization.data(withJSONObject: object)
        client.sendMessage(userId: String(user), message: String(decoding: data, as: UTF8.self), completion: nil)
    }

    // MARK: - Receiving, as the 1.0 clients do

    func onMessageReceive(message: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any],
            object["message_version"] as? String == "1.0", let action = object["message_action"] as? Int,
            let from = (object["fromUserId"] as? NSNumber)?.uintValue
        else { return }
        state.withLock { $0.received.append(action) }
        let current = self.current
        switch action {
        case 0, 10:
            if current.state == .prepared {
                state.withLock {
                    $0 = State(
                        state: .calling, peer: from, callId: object["callId"] as? String,
                        room: object["fromRoomId"] as? String, received: $0.received)
                }
            } else if current.peer == from, current.state == .calling {
                state.withLock {
                    $0.callId = object["callId"] as? String
                    $0.room = object["fromRoomId"] as? String
                }
            } else if current.peer != from {
                send(
                    3, to: from, callId: object["callId"] as? String ?? "",
                    extra: ["rejectReason": kRejectReasonCallBusy, "rejectByInternal": 1])
            }
        case 1, 3, 4:
            if current.peer == from { end() }
        case 2:
            if current.peer == from, current.state == .calling { state.withLock { $0.state = .connecting } }
        default:
            break  // unknown actions are ignored
        }
    }
}
