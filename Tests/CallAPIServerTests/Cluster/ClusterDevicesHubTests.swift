import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Push devices on a node of a cluster: a change here is written for the other nodes, and their changes replace
/// this node's lists, so a call held on any node is pushed to devices registered on any other (docs/scale-out.md).
@Suite struct ClusterDevicesHubTests {
    var hub: HubState
    let alice = SessionID(1)
    let bob = SessionID(2)
    let iphone = PushTestKit.apnsDevice()

    init() {
        var policy = PushPolicy()
        policy.ringSeconds = 30
        hub = HubState(limits: HubLimits(), pushPolicy: policy, topology: .node("a"))
    }

    mutating func login(_ id: SessionID, _ user: String) {
        _ = hub.handle(.connected(id), now: 0)
        _ = hub.handle(.frame(id, .login(.init(id: 1, token: "t"))), now: 0)
        _ = hub.handle(
            .tokenChecked(id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 9_999_999)),
            now: 0)
    }

    func written(_ actions: [HubAction]) -> [UserDevices] {
        actions.compactMap { if case .cluster(.devices(let list)) = $0 { list } else { nil } }
    }

    func saves(_ actions: [HubAction]) -> Int {
        actions.filter { if case .push(.saveDevices) = $0 { true } else { false } }.count
    }

    @Test mutating func aRegistrationIsSavedAndWrittenForTheOtherNodesAndSoIsARemoval() {
        login(bob, "1002")
        let registered = hub.handle(.frame(bob, .registerDevice(.init(id: 2, device: iphone))), now: 5)
        #expect(saves(registered) == 1)
        #expect(written(registered) == [UserDevices(userId: "1002", entries: hub.devices.devices(of: "1002"))])
        #expect(written(registered).first?.entries.map(\.device) == [iphone])

        let removed = hub.handle(.frame(bob, .removeDevice(.init(id: 3, deviceId: "iphone"))), now: 6)
        #expect(written(removed) == [UserDevices(userId: "1002", entries: [])])
    }

    @Test mutating func aTokenThatMovesToAnotherUserIsWrittenForBothUsers() {
        login(alice, "1001")
        login(bob, "1002")
        _ = hub.handle(.frame(alice, .registerDevice(.init(id: 2, device: iphone))), now: 5)
        let moved = hub.handle(.frame(bob, .registerDevice(.init(id: 3, device: iphone))), now: 6)
        #expect(written(moved).map(\.userId) == ["1001", "1002"])
        #expect(written(moved).first?.entries == [])
    }

    @Test mutating func devicesRegisteredOnAnotherNodeArePushedWhenACallIsHeldHere() {
        login(alice, "1001")
        let entry = DeviceRegistry.Entry(device: iphone, registeredAt: 1)
        let reported = hub.handle(.cluster(.devices([UserDevices(userId: "1002", entries: [entry])])), now: 2)
        #expect(saves(reported) == 1 && written(reported).isEmpty)
        // The same list again changes nothing.
        #expect(hub.handle(.cluster(.devices([UserDevices(userId: "1002", entries: [entry])])), now: 3).isEmpty)

        let mark = PushMark.call(callId: "call-1", callerName: "Ada", video: true)
        let held = hub.handle(.frame(alice, .send(.init(id: 9, to: "1002", body: "call", push: mark))), now: 1_000)
        let pushed = held.compactMap { if case .push(.deliver(let job)) = $0 { job.device } else { nil } }
        #expect(pushed == [iphone])

        // Removed on that node: gone here too.
        _ = hub.handle(.cluster(.devices([UserDevices(userId: "1002", entries: [])])), now: 4)
        #expect(!hub.devices.hasDevices("1002"))
    }
}
