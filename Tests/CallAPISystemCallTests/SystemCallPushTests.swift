import CallAPI
import Foundation
import Testing

@testable import CallAPISystemCall

@Suite("System call push payload and call UUIDs")
struct SystemCallPushTests {
    let push = SystemCallPush(
        callId: "8D0C2F4A-1B3E-4C5D-9E6F-7A8B9C0D1E2F", callerId: 1001, callerName: "Ada", video: true,
        ringDeadlineMillis: 1_767_225_615_000)

    private func parse(_ json: String) -> [AnyHashable: Any] {
        (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
    }

    @Test func thePayloadIsWrittenUnderItsKeyWithEveryField() {
        #expect(
            push.payloadJSON()
                == #"{"callapi":{"callId":"8D0C2F4A-1B3E-4C5D-9E6F-7A8B9C0D1E2F","callerId":1001,"callerName":"Ada","#
                + #""ringDeadline":1767225615000,"v":1,"video":true}}"#)
    }

    @Test func aWrittenPayloadReadsBackTheSame() throws {
        #expect(try SystemCallPush(payload: parse(push.payloadJSON())) == push)
    }

    @Test func anFCMDataMessageCarriesThePayloadAsAJSONString() throws {
        let object = try #require(parse(push.payloadJSON())["callapi"])
        let text = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        #expect(try SystemCallPush(payload: ["callapi": text]) == push)
    }

    @Test func theCallerNameComesFromTheCallExtension() {
        let fromExtension = SystemCallPush(
            callId: "c", callerId: 1, callExtension: ["displayName": .string("Ada"), "other": .int(1)], video: false,
            ringDeadlineMillis: 1)
        #expect(fromExtension.callerName == "Ada")
        let long = SystemCallPush(
            callId: "c", callerId: 1, callerName: String(repeating: "x", count: 500), video: false,
            ringDeadlineMillis: 1)
        #expect(long.callerName?.count == SystemCallPush.maxCallerNameLength)
    }

    @Test(arguments: [
        (#"{"other": 1}"#, SystemCallPushError.missingPayload),
        (#"{"callapi": 5}"#, .malformed("\"callapi\" is neither an object nor a JSON string")),
        (#"{"callapi": "{not json"}"#, .malformed("the \"callapi\" entry is not a JSON object")),
        (#"{"callapi": {"v": 2}}"#, .unsupportedVersion(2)),
        (#"{"callapi": {"v": 1}}"#, .invalidField("callId", "missing or not a string")),
        (
            #"{"callapi": {"v": 1, "callId": "c", "callerId": -4}}"#,
            .invalidField("callerId", "missing or not a user id")
        ),
        (
            #"{"callapi": {"v": 1, "callId": "c", "callerId": 4, "callerName": 7}}"#,
            .invalidField("callerName", "not a string")
        ),
        (
            #"{"callapi": {"v": 1, "callId": "c", "callerId": 4, "video": "yes"}}"#,
            .invalidField("video", "missing or not a boolean")
        ),
        (
            #"{"callapi": {"v": 1, "callId": "c", "callerId": 4, "video": true}}"#,
            .invalidField("ringDeadline", "missing or not a time in milliseconds")
        ),
    ])
    func aBadPayloadGetsAnErrorNamingTheProblem(json: String, expected: SystemCallPushError) {
        #expect(throws: expected) { try SystemCallPush(payload: parse(json)) }
    }

    @Test func anOverlongCallIdIsRefused() {
        let json = #"{"callapi": {"v": 1, "callId": "\#(String(repeating: "a", count: 129))", "callerId": 1}}"#
        #expect(throws: SystemCallPushError.invalidField("callId", "must have 1 to 128 characters")) {
            try SystemCallPush(payload: parse(json))
        }
    }

    @Test func sha1MatchesTheStandardTestVectors() {
        func hex(_ text: String) -> String { SHA1.digest(Array(text.utf8)).map { String(format: "%02x", $0) }.joined() }
        #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(
            hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(String(repeating: "a", count: 1_000)) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
    }

    @Test func callUUIDsAreVersion5NameBasedUUIDs() throws {
        // RFC 9562's example: "www.example.com" in the DNS namespace.
        let dns = try #require(UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8"))
        #expect(
            CallUUID.nameBased(namespace: dns, name: "www.example.com").uuidString.lowercased()
                == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
    }

    @Test func aCallIdAlwaysNamesTheSameSystemCallAndDifferentCallIdsDifferentOnes() {
        #expect(CallUUID.of(callId: push.callId) == push.uuid)
        #expect(CallUUID.of(callId: push.callId) == CallUUID.of(callId: String(push.callId)))
        #expect(CallUUID.of(callId: "a") != CallUUID.of(callId: "b"))
        #expect(CallUUID.of(callId: "a").uuidString.dropFirst(14).first == "5")
    }
}
