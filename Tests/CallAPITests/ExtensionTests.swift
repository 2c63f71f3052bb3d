import CallAPITesting
import Foundation
import Testing

@testable import CallAPI

/// `userExtension` and `callExtension` travel as `fromUserExtension`; values must be JSON.
@Suite("Extensions")
struct ExtensionTests {
    @Test("userExtension and callExtension are merged (the call's keys win) and arrive in the callee's event info")
    func extensionsMergeAndArrive() throws {
        let h = CallHarness()
        h.reprepare(1) {
            $0.userExtension = ["name": "alice", "level": 1, "tags": ["a", "b"], "meta": ["verified": true]]
        }
        let call = h[1].api.probe {
            $0.call(remoteUserId: 2, callType: .video, callExtension: ["level": 2, "topic": "standup"], completion: $1)
        }
        #expect(call.succeeded)
        let expected: JSONValue = .object([
            "name": .string("alice"), "level": .int(2), "tags": .array([.string("a"), .string("b")]),
            "meta": .object(["verified": .bool(true)]), "topic": .string("standup"),
        ])
        let ring = try #require(h[2].listener.stateRecords.first)
        #expect(ring.state == .calling)
        #expect(ring.eventInfo[kFromUserExtension] == expected)
        #expect(h[1].listener.stateRecords.first?.eventInfo[kFromUserExtension] == expected)
        let first = try #require(h.network.sentMessages.first)
        let wire = try #require(jsonObject(first.text))
        let ext = try #require(wire["fromUserExtension"] as? [String: Any])
        #expect(ext["level"] as? Int == 2)
        #expect(ext["name"] as? String == "alice")
    }

    @Test("The callee's userExtension comes back with its accept")
    func calleeExtensionInAccept() {
        let h = CallHarness()
        h.reprepare(2) { $0.userExtension = ["device": "tablet"] }
        h.reach(.callingAsCaller)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        let connecting = h[1].listener.stateRecords.first { $0.state == .connecting }
        #expect(connecting?.eventInfo[kFromUserExtension] == .object(["device": .string("tablet")]))
    }

    @Test("The call's extension is only for that call; the next call carries just the userExtension")
    func callExtensionIsPerCall() {
        let h = CallHarness()
        h.reprepare(1) { $0.userExtension = ["name": "alice"] }
        _ = h[1].api.probe { $0.call(remoteUserId: 2, callType: .video, callExtension: ["topic": "x"], completion: $1) }
        _ = h[1].api.probe { $0.cancelCall(completion: $1) }
        h[2].listener.reset()
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h[2].listener.stateRecords.first?.eventInfo[kFromUserExtension] == .object(["name": .string("alice")]))
    }

    @Test("A non-JSON userExtension value is refused by prepareForCall with a message naming the key")
    func invalidUserExtensionRefused() {
        let h = CallHarness()
        var config = PrepareConfig(roomId: "room-1")
        config.userExtension = ["ok": 1, "when": Date(), "blob": Data([1, 2])]
        #expect(config.invalidExtensionKeys == ["blob", "when"])
        let probe = h[1].api.probe { $0.prepareForCall(prepareConfig: config, completion: $1) }
        let message = probe.errorMessage ?? ""
        #expect(message.contains("when") && message.contains("blob"), "\(message)")
        #expect(message.contains("JSON"))
        #expect(h[1].listener.stateRecords.isEmpty)
        #expect(h[1].api.state == .prepared)
        // The earlier config is kept: calls still use room-1 and no extension.
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h.messages(from: 1, to: 2).first?.fromUserExtension == nil)
    }

    @Test("A non-JSON callExtension value is refused by call with a message naming the key; nothing is sent")
    func invalidCallExtensionRefused() {
        let h = CallHarness()
        let probe = h[1].api.probe {
            $0.call(remoteUserId: 2, callType: .video, callExtension: ["fine": "x", "bad": NSObject()], completion: $1)
        }
        #expect(probe.errorMessage?.contains("bad") == true)
        #expect(probe.errorMessage?.contains("fine") == false)
        #expect(h[1].api.state == .prepared)
        #expect(h.network.sentMessages.isEmpty)
        #expect(h[2].api.state == .prepared)
    }

    @Test("JSONValue converts Foundation values and rejects the rest")
    func jsonConversion() {
        #expect(JSONValue(any: "s") == .string("s"))
        #expect(JSONValue(any: 3) == .int(3))
        #expect(JSONValue(any: 2.5) == .double(2.5))
        #expect(JSONValue(any: true) == .bool(true))
        #expect(JSONValue(any: NSNull()) == .null)
        #expect(JSONValue(any: [1, "a"] as [Any]) == .array([.int(1), .string("a")]))
        #expect(JSONValue(any: ["k": ["n": 1]] as [String: Any]) == .object(["k": .object(["n": .int(1)])]))
        #expect(JSONValue(any: Date()) == nil)
        #expect(JSONValue(any: [Date()] as [Any]) == nil)
        #expect(JSONValue.invalidKeys(in: ["a": 1, "b": NSObject()]) == ["b"])
    }
}
