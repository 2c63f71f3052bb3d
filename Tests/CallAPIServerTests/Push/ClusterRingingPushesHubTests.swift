import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// A user online on one device while another sleeps, across the nodes of a cluster (docs/push.md, "A user online on
/// another device"): the node relaying the call knows the devices of the callee's sessions on every node, pushes the
/// sleeping one, hands the call to the woken device wherever it logs in, and settles the pushes when the callee's
/// answer reaches it from another node.
@Suite struct ClusterRingingPushesHubTests {
    /// Node a: the caller's. The callee's tablet (named "pixel") is on node b.
    var a = ClusterTombstoneHubTests.node("a")
    let caller = SessionID(1)
    let tablet = SessionID(7)
    let iphone = PushTestKit.apnsDevice()
    let pixel = PushTestKit.fcmDevice()
    static let callMark = PushMark.call(callId: "call-1", callerName: "Ada", video: true)

    init() {
        ClusterTombstoneHubTests.login(&a, caller, "1001")
        let entries = [iphone, pixel].map { DeviceRegistry.Entry(device: $0, registeredAt: 1) }
        _ = a.handle(.cluster(.devices([UserDevices(userId: "1002", entries: entries)])), now: 1)
        _ = a.handle(.cluster(.remotePresence(Self.presence([("b", tablet, "pixel")]))), now: 1)
    }

    /// The other nodes' sessions of user 1002: (node, session, device).
    static func presence(_ sessions: [(String, SessionID, String?)]) -> RemotePresence {
        RemotePresence(sessions: sessions.map { ($0.0, SessionRow(session: $0.1, userId: "1002", device: $0.2)) })
    }

    static func forwarded(_ actions: [HubAction]) -> [ClusterEnvelope] {
        actions.flatMap { action -> [ClusterEnvelope] in
            if case .cluster(.forward(let envelopes, _)) = action { envelopes } else { [] }
        }
    }

    static func pushes(_ actions: [HubAction]) -> [PushAction] {
        actions.compactMap { if case .push(let push) = $0 { push } else { nil } }
    }

    mutating func call(now: Int64 = 1_000) -> [HubAction] {
        a.handle(.frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: Self.callMark))), now: now)
    }

    @Test mutating func aCallToAUserOnlineOnAnotherNodeIsPushedToTheDeviceNoSessionThereNames() {
        let actions = call()
        #expect(Self.forwarded(actions).map(\.node) == ["b"])
        let push = CallPush(callId: "call-1", callerId: 1001, callerName: "Ada", video: true, ringDeadline: 31_000)
        #expect(Self.pushes(actions) == [.deliver(PushJob(userId: "1002", device: iphone, call: push))])
    }

    @Test mutating func aSessionOnAnotherNodeThatNamesNoDeviceKeepsTheOldRuleNoPush() {
        _ = a.handle(
            .cluster(.remotePresence(Self.presence([("b", tablet, "pixel"), ("c", SessionID(3), nil)]))), now: 2)
        #expect(Self.pushes(call()).isEmpty)
    }

    @Test mutating func theWokenDeviceLoggedInToAnotherNodeIsHandedTheCallOncePerSession() {
        let relayed = Self.forwarded(call()).first
        let phone = SessionID(3)
        let woken = Self.presence([("b", tablet, "pixel"), ("c", phone, "iphone")])
        let handed = Self.forwarded(a.handle(.cluster(.remotePresence(woken)), now: 4_000))
        #expect(handed.count == 1)
        #expect(handed.first?.node == "c" && handed.first?.userId == "1002" && handed.first?.device == "iphone")
        #expect(handed.first?.held == true && handed.first?.messageId == relayed?.messageId)
        #expect(handed.first?.body.text == "call" && handed.first?.from == "1001")
        // The next read finds the same session: not again. A new session of that device (it logged in again) is.
        #expect(Self.forwarded(a.handle(.cluster(.remotePresence(woken)), now: 4_500)).isEmpty)
        let again = Self.presence([("b", tablet, "pixel"), ("c", SessionID(4), "iphone")])
        #expect(Self.forwarded(a.handle(.cluster(.remotePresence(again)), now: 5_000)).map(\.device) == ["iphone"])
        // After the ring time, nothing.
        _ = a.handle(.tick, now: 31_000)
        let late = Self.presence([("b", tablet, "pixel"), ("c", SessionID(5), "iphone")])
        #expect(Self.forwarded(a.handle(.cluster(.remotePresence(late)), now: 31_500)).isEmpty)
    }

    @Test mutating func theCalleesAnswerFromAnotherNodeSettlesThePushesWithATombstone() {
        _ = call()
        let answer = ClusterEnvelope(
            node: "a", userId: "1001", from: "1002", body: MessageBody("accept"), sentAt: 2_000, messageId: "m-b-1",
            settles: .answer(callId: "call-1", accepted: true))
        let settled = a.handle(.cluster(.arrived([answer])), now: 2_000)
        #expect(Self.pushes(settled) == [.cancel(callId: "call-1", userId: "1002")])
        let tombstones = ClusterTombstoneHubTests.written(settled)
        #expect(tombstones.map(\.tombstone.reason) == [.answeredElsewhere])
        // The caller got the answer itself.
        #expect(ClusterTombstoneHubTests.frames(settled, to: caller).count == 1)
        // Settled: a later wake of the iPhone is not handed the call.
        let woken = Self.presence([("b", tablet, "pixel"), ("c", SessionID(3), "iphone")])
        #expect(Self.forwarded(a.handle(.cluster(.remotePresence(woken)), now: 3_000)).isEmpty)
    }

    @Test func anAnswerForwardedToAnotherNodeCarriesItsMarkAndItsOwnDeviceCopiesDoNot() {
        // Node b: the callee's tablet answers the caller on node a; 1002's other device is on node c.
        var b = ClusterTombstoneHubTests.node("b")
        ClusterTombstoneHubTests.login(&b, tablet, "1002")
        _ = b.handle(
            .cluster(
                .remotePresence(
                    RemotePresence(sessions: [
                        ("a", SessionRow(session: caller, userId: "1001")),
                        ("c", SessionRow(session: SessionID(3), userId: "1002", device: "iphone")),
                    ]))), now: 1)
        let mark = PushMark.answer(callId: "call-1", accepted: false)
        let actions = b.handle(
            .frame(tablet, .send(.init(id: 4, to: "1001", body: "reject", push: mark, copy: true))), now: 2_000)
        let envelopes = Self.forwarded(actions)
        #expect(envelopes.first { $0.node == "a" }?.settles == mark)
        #expect(envelopes.first { $0.node == "c" }.map { $0.copyOf == "1001" && $0.settles == nil } == true)
    }

    @Test func aCallForOneDeviceReachesOnlyTheSessionNamingIt() {
        var c = ClusterTombstoneHubTests.node("c")
        let phone = SessionID(3)
        let laptop = SessionID(4)
        for (id, device) in [(phone, "iphone"), (laptop, "mac")] {
            _ = c.handle(.connected(id), now: 0)
            _ = c.handle(.frame(id, .login(.init(id: 1, token: "t", deviceId: device))), now: 0)
            _ = c.handle(
                .tokenChecked(
                    id, requestId: 1, purpose: .login, result: .valid(userId: "1002", expiresAt: 9_999_999)), now: 0)
        }
        let kept = ClusterEnvelope(
            node: "c", userId: "1002", from: "1001", body: MessageBody("call"), sentAt: 1_000, messageId: "m-a-1",
            held: true, device: "iphone")
        let actions = c.handle(.cluster(.arrived([kept])), now: 4_000)
        #expect(ClusterTombstoneHubTests.frames(actions, to: phone).count == 1)
        #expect(ClusterTombstoneHubTests.frames(actions, to: laptop).isEmpty)
        // Not put back for another node: the node keeping the call hands it to that device's next session.
        #expect(!actions.contains { if case .cluster(.unclaimed) = $0 { true } else { false } })
    }
}
