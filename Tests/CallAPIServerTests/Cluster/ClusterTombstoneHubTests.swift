import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Tombstones of withdrawn pushed calls on the nodes of a cluster: the node that withdrew the call writes its
/// tombstone for the others, and a node that reads one tells the user's sessions there and its later logins
/// (docs/scale-out.md).
@Suite struct ClusterTombstoneHubTests {
    let caller = SessionID(1)
    let callee = SessionID(2)
    let iphone = PushTestKit.apnsDevice()

    static func node(_ id: String) -> HubState {
        var policy = PushPolicy()
        policy.ringSeconds = 30
        return HubState(limits: HubLimits(), pushPolicy: policy, topology: .node(id))
    }

    @discardableResult
    static func login(_ hub: inout HubState, _ id: SessionID, _ user: String, now: Int64 = 0) -> [HubAction] {
        _ = hub.handle(.connected(id), now: now)
        _ = hub.handle(.frame(id, .login(.init(id: 1, token: "t"))), now: now)
        return hub.handle(
            .tokenChecked(id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 9_999_999)),
            now: now)
    }

    static func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    static func written(_ actions: [HubAction]) -> [UserTombstone] {
        actions.compactMap { if case .cluster(.tombstone(let entry)) = $0 { entry } else { nil } }
    }

    /// Node a: the callee has a device and is offline; the caller's pushed call is withdrawn. Returns what a wrote.
    func withdrawnOnNodeA() -> [UserTombstone] {
        var a = Self.node("a")
        Self.login(&a, caller, "1001")
        let entry = DeviceRegistry.Entry(device: iphone, registeredAt: 1)
        _ = a.handle(.cluster(.devices([UserDevices(userId: "1002", entries: [entry])])), now: 1)
        let mark = PushMark.call(callId: "call-1", callerName: "Ada", video: true)
        _ = a.handle(.frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: mark))), now: 1_000)
        let cancel = a.handle(
            .frame(
                caller,
                .send(.init(id: 10, to: "1002", body: "cancel", push: .withdraw(callId: "call-1", reason: .cancelled)))),
            now: 2_000)
        return Self.written(cancel)
    }

    @Test func aWithdrawnPushedCallsTombstoneIsWrittenForTheOtherNodes() {
        let written = withdrawnOnNodeA()
        #expect(written.count == 1)
        #expect(written.first?.userId == "1002")
        #expect(written.first?.tombstone.callId == "call-1" && written.first?.tombstone.reason == .cancelled)
        #expect(written.first?.tombstone.at == 2_000)
        #expect((written.first?.tombstone.expiresAt ?? 0) > 2_000)
    }

    @Test func aTombstoneReadFromAnotherNodeReachesTheUsersSessionThereAndItsLaterLogins() {
        let written = withdrawnOnNodeA()
        let withdrawn = ServerFrame.callWithdrawn(.init(callId: "call-1", reason: .cancelled, at: 2_000))

        // The callee woke from the push and logged in to node b before b read the tombstone.
        var b = Self.node("b")
        let early = Self.login(&b, callee, "1002", now: 2_500)
        #expect(!Self.frames(early, to: callee).contains(withdrawn))
        let read = b.handle(.cluster(.tombstones(written)), now: 3_000)
        #expect(Self.frames(read, to: callee) == [withdrawn])
        // Read again at the next presence read: already known, not sent again.
        #expect(b.handle(.cluster(.tombstones(written)), now: 4_000).isEmpty)
        // A later login on b learns it as one on a would.
        let later = Self.login(&b, SessionID(3), "1002", now: 5_000)
        #expect(Self.frames(later, to: SessionID(3)).contains(withdrawn))
    }

    @Test func anExpiredTombstoneReadFromAnotherNodeIsNotKept() {
        let written = withdrawnOnNodeA()
        var b = Self.node("b")
        let expiresAt = written.first?.tombstone.expiresAt ?? 0
        #expect(b.handle(.cluster(.tombstones(written)), now: expiresAt).isEmpty)
        let login = Self.login(&b, callee, "1002", now: expiresAt + 1)
        #expect(!Self.frames(login, to: callee).contains { if case .callWithdrawn = $0 { true } else { false } })
    }

    @Test func aSingleServerKeepsTheTombstoneButWritesNoneForOthers() {
        var single = HubState(limits: HubLimits(), pushPolicy: PushPolicy())
        Self.login(&single, callee, "1002")
        _ = single.handle(.frame(callee, .registerDevice(.init(id: 2, device: iphone))), now: 0)
        _ = single.handle(.disconnected(callee), now: 0)
        Self.login(&single, caller, "1001")
        let mark = PushMark.call(callId: "call-1", callerName: "Ada", video: true)
        _ = single.handle(.frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: mark))), now: 1_000)
        let withdraw = PushMark.withdraw(callId: "call-1", reason: .cancelled)
        let cancel = single.handle(
            .frame(caller, .send(.init(id: 10, to: "1002", body: "cancel", push: withdraw))), now: 2_000)
        #expect(Self.written(cancel).isEmpty)
        let login = Self.login(&single, SessionID(3), "1002", now: 3_000)
        #expect(
            Self.frames(login, to: SessionID(3)).contains(
                .callWithdrawn(.init(callId: "call-1", reason: .cancelled, at: 2_000))))
    }
}
