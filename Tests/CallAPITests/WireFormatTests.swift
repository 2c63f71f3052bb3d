import CallAPITesting
import Foundation
import Testing

@testable import CallAPI

/// wire-format.md: the envelope, the actions, their keys and raw values, and the public enums' raw values.
@Suite("Wire format 1.0")
struct WireFormatTests {
    static let samples: [CallMessage] = [
        CallMessage(
            action: .videoCall, timestamp: 1_767_225_600_123, messageId: 1, fromUserId: 1, callId: "A-1",
            fromUserExtension: ["nick": .string("al"), "vip": .bool(true), "age": .int(30)], remoteUserId: 2,
            fromRoomId: "room-1"),
        CallMessage(
            action: .audioCall, timestamp: 5, messageId: 2, fromUserId: 1, callId: "A-2", remoteUserId: 2,
            fromRoomId: "r"),
        CallMessage(
            action: .cancelCall, timestamp: 6, messageId: 3, fromUserId: 1, callId: "A-2", cancelCallByInternal: true),
        CallMessage(action: .cancelCall, timestamp: 6, messageId: 4, fromUserId: 1, callId: "A-2"),
        CallMessage(action: .accept, timestamp: 7, messageId: 5, fromUserId: 2, callId: "A-2"),
        CallMessage(
            action: .reject, timestamp: 8, messageId: 6, fromUserId: 2, callId: "A-2", rejectByInternal: true,
            rejectReason: kRejectReasonCallBusy),
        CallMessage(action: .reject, timestamp: 8, messageId: 7, fromUserId: 2, callId: "A-2"),
        CallMessage(
            action: .hangup, timestamp: 9, messageId: 8, fromUserId: 4_294_967_295, callId: "A-2", hangupReason: "bye"),
        CallMessage(action: .hangup, timestamp: 9, messageId: 9, fromUserId: 2, callId: "A-2"),
    ]

    @Test("Encode then decode gives the same message", arguments: samples)
    func roundTrip(message: CallMessage) throws {
        let decoded = try CallMessage.decode(message.encoded())
        #expect(decoded.message == message)
        #expect(decoded.fields == message.fields)
    }

    @Test("The envelope has exactly the spec's keys, with the spec's types")
    func envelopeKeys() throws {
        let text = Self.samples[0].encoded()
        let object = try #require(jsonObject(text))
        #expect(
            Set(object.keys) == [
                "message_action", "message_version", "message_timestamp", "messageId", "fromUserId", "callId",
                "fromUserExtension", "remoteUserId", "fromRoomId",
            ])
        #expect(object["message_action"] as? Int == 0)
        #expect(object["message_version"] as? String == "1.0")
        #expect(object["message_timestamp"] as? Int == 1_767_225_600_123)
        #expect(object["messageId"] as? Int == 1)
        #expect(object["fromUserId"] as? Int == 1)
        #expect(object["callId"] as? String == "A-1")
        #expect(object["remoteUserId"] as? Int == 2)
        #expect(object["fromRoomId"] as? String == "room-1")
        let ext = try #require(object["fromUserExtension"] as? [String: Any])
        #expect(ext["nick"] as? String == "al")
        #expect(ext["age"] as? Int == 30)
        #expect(text.contains(#""message_version":"1.0""#), "the version is a string")
        #expect(text.contains(#""vip":true"#))
    }

    @Test("Each action has its number and its extra keys, and no others")
    func actionKeys() throws {
        let base: Set = ["message_action", "message_version", "message_timestamp", "messageId", "fromUserId", "callId"]
        let expected: [(Int, Set<String>)] = [
            (0, base.union(["remoteUserId", "fromRoomId", "fromUserExtension"])),
            (10, base.union(["remoteUserId", "fromRoomId"])),
            (1, base.union(["cancelCallByInternal"])),
            (1, base.union(["cancelCallByInternal"])),
            (2, base),
            (3, base.union(["rejectByInternal", "rejectReason"])),
            (3, base.union(["rejectByInternal"])),
            (4, base.union(["hangupReason"])),
            (4, base),
        ]
        for (message, (action, keys)) in zip(Self.samples, expected) {
            let object = try #require(jsonObject(message.encoded()))
            #expect(object["message_action"] as? Int == action)
            #expect(Set(object.keys) == keys, "\(message.action)")
        }
        #expect(jsonObject(Self.samples[2].encoded())?["cancelCallByInternal"] as? Int == 1)
        #expect(jsonObject(Self.samples[3].encoded())?["cancelCallByInternal"] as? Int == 0)
        #expect(jsonObject(Self.samples[5].encoded())?["rejectByInternal"] as? Int == 1)
        #expect(jsonObject(Self.samples[6].encoded())?["rejectByInternal"] as? Int == 0)
        // 20 (ack) and 21 (keep-alive) are ours; older clients ignore unknown actions.
        #expect(MessageAction.allCases.map(\.rawValue).sorted() == [0, 1, 2, 3, 4, 10, 20, 21])
    }

    @Test("The busy reject text is exactly the existing clients'")
    func busyText() {
        #expect(kRejectReasonCallBusy == "The user is currently busy")
        let text = Self.samples[5].encoded()
        #expect(text.contains(#""rejectReason":"The user is currently busy""#))
    }

    @Test("Unknown keys are ignored by the reader and kept in the fields")
    func unknownKeysIgnored() throws {
        let text = #"""
            {"message_action":2,"message_version":"1.0","message_timestamp":1,"messageId":2,"fromUserId":5,
             "callId":"x","someFutureKey":{"a":[1,2]},"rtmTag":"t"}
            """#
        let (message, fields) = try CallMessage.decode(text)
        #expect(message.action == .accept)
        #expect(message.fromUserId == 5)
        #expect(fields["rtmTag"] == .string("t"))
    }

    @Test("Decoding says what is wrong")
    func decodeErrors() {
        func error(_ text: String) -> WireError? {
            do {
                _ = try CallMessage.decode(text)
                return nil
            } catch {
                return error
            }
        }
        let ok = #""message_timestamp":1,"messageId":1,"fromUserId":2,"callId":"c""#
        #expect(error("nope") == .notJSON)
        #expect(error("[]") == .notAnObject)
        #expect(error(#"{"message_action":2,\#(ok)}"#) == .missingField("message_version"))
        #expect(error(#"{"message_action":2,"message_version":"2.0",\#(ok)}"#) == .unsupportedVersion("2.0"))
        #expect(error(#"{"message_action":7,"message_version":"1.0",\#(ok)}"#) == .unknownAction(7))
        #expect(error(#"{"message_version":"1.0",\#(ok)}"#) == .missingField("message_action"))
        #expect(
            error(#"{"message_action":0,"message_version":"1.0",\#(ok),"fromRoomId":"r"}"#)
                == .missingField("remoteUserId"))
        #expect(
            error(#"{"message_action":0,"message_version":"1.0",\#(ok),"remoteUserId":1,"fromRoomId":3}"#)
                == .invalidField("fromRoomId"))
        #expect(WireError.unsupportedVersion("2.0").description.contains("2.0"))
        #expect(WireError.unknownAction(7).description.contains("7"))
    }

    /// Messages as an older client puts them on the wire, written straight from the spec.
    static let handWritten: [String: String] = [
        "call": #"""
        {"fromUserId":2,"remoteUserId":1,"fromRoomId":"room-2","message_action":0,"callId":"f0e1-old",
         "message_timestamp":1767225600000,"messageId":41,"message_version":"1.0",
         "fromUserExtension":{"userName":"Bob","avatar":"https://x/y.png","level":3}}
        """#,
        "cancel": #"""
        {"message_action":1,"message_version":"1.0","message_timestamp":1767225600000,"messageId":42,
         "fromUserId":2,"callId":"f0e1-old","cancelCallByInternal":1}
        """#,
        "cancelWithoutFlag": #"""
        {"message_action":1,"message_version":"1.0","message_timestamp":1767225600000,"messageId":43,
         "fromUserId":2,"callId":"f0e1-old"}
        """#,
    ]

    @Test("A call written by hand, as an older client sends it, rings with everything in the event info")
    func handWrittenCallRings() throws {
        var driver = MachineDriver(.prepared)
        let actions = driver.receive(text: Self.handWritten["call"]!, from: nil)
        let change = try #require(actions.stateChanges.first)
        #expect(change.state == .calling && change.reason == .remoteVideoCall)
        #expect(driver.machine.callId == "f0e1-old")
        #expect(driver.machine.call?.peer == 2)
        #expect(driver.machine.call?.room == "room-2")
        #expect(
            change.eventInfo[kFromUserExtension]
                == .object(["userName": .string("Bob"), "avatar": .string("https://x/y.png"), "level": .int(3)]))
    }

    @Test("A cancel written by hand ends the ringing call; cancelCallByInternal read as 1 or missing")
    func handWrittenCancels() {
        var timedOut = MachineDriver(.prepared)
        timedOut.receive(text: Self.handWritten["call"]!, from: nil)
        #expect(timedOut.receive(text: Self.handWritten["cancel"]!, from: nil).reasons == [.remoteCallingTimeout])
        var cancelled = MachineDriver(.prepared)
        cancelled.receive(text: Self.handWritten["call"]!, from: nil)
        #expect(
            cancelled.receive(text: Self.handWritten["cancelWithoutFlag"]!, from: nil).reasons == [.remoteCancelled])
    }

    @Test("A whole call with an older client: its accept, reject and hangup written by hand are understood")
    func handWrittenReplies() throws {
        let h = CallHarness()
        h.network.vouchesForSender = false
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        let callId = h[1].api.getCallId()
        func send(_ body: String) {
            h.network.injectWithoutSender(
                text:
                    #"{"message_version":"1.0","message_timestamp":\#(h.clock.nowMillis()),"fromUserId":2,"callId":"\#(callId)",\#(body)}"#,
                to: 1)
        }
        send(#""message_action":2,"messageId":900"#)
        #expect(h[1].api.state == .connected || h[1].api.state == .connecting)
        #expect(h[1].listener.stateReasons.contains(.init(.connecting, .remoteAccepted)))
        send(#""message_action":4,"messageId":901,"hangupReason":"see you""#)
        #expect(h[1].listener.lastState?.reason == .remoteHangup)
        #expect(h[1].listener.lastState?.eventReason == "see you")

        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        let second = h[1].api.getCallId()
        h.network.injectWithoutSender(
            text:
                #"{"message_action":3,"message_version":"1.0","message_timestamp":1,"messageId":902,"fromUserId":2,"callId":"\#(second)","rejectByInternal":1,"rejectReason":"The user is currently busy"}"#,
            to: 1)
        #expect(h[1].listener.lastState?.reason == .remoteCallBusy)
    }

    @Test("What this client sends can be read by key, as an older client reads it")
    func sentMessagesReadByKey() throws {
        let h = CallHarness()
        _ = h[1].api.probe { $0.call(remoteUserId: 2, callType: .audio, callExtension: [:], completion: $1) }
        let first = try #require(h.network.sentMessages.first)
        let raw = try #require(jsonObject(first.text))
        #expect(raw["message_action"] as? Int == 10)
        #expect(raw["message_version"] as? String == "1.0")
        #expect(raw["fromUserId"] as? Int == 1)
        #expect(raw["remoteUserId"] as? Int == 2)
        #expect(raw["fromRoomId"] as? String == "room-1")
        #expect(raw["callId"] as? String == h[1].api.getCallId())
        #expect(raw["message_timestamp"] as? Int == Int(h.clock.nowMillis()))
        #expect(raw["messageId"] is Int)
        _ = h[1].api.probe { $0.cancelCall(completion: $1) }
        let ids = h.network.sentMessages.filter { $0.from == 1 }.compactMap {
            jsonObject($0.text)?["messageId"] as? Int
        }
        #expect(ids.count == 2 && ids[1] > ids[0], "messageId increments per message")
    }

    @Test("Public enums have the existing API's raw values")
    func rawValues() {
        #expect(CallStateType.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 10])
        let reasons: [CallStateReason: Int] = [
            .none: 0, .joinRTCFailed: 1, .messageFailed: 4, .localRejected: 5, .remoteRejected: 6,
            .remoteAccepted: 7, .localAccepted: 8, .localHangup: 9, .remoteHangup: 10, .localCancelled: 11,
            .remoteCancelled: 12, .recvRemoteFirstFrame: 13, .callingTimeout: 14, .cancelByCallerRecall: 15,
            .remoteCallBusy: 17, .remoteCallingTimeout: 18, .localVideoCall: 30, .localAudioCall: 31,
            .remoteVideoCall: 32, .remoteAudioCall: 33,
            .peerLost: 40, .answeredElsewhere: 41, .rejectedElsewhere: 42,  // ours
        ]
        #expect(CallStateReason.allCases.count == reasons.count)
        for (reason, raw) in reasons { #expect(reason.rawValue == raw, "\(reason)") }
        let events: [CallEvent: Int] = [
            .none: 0, .deinitialize: 1, .callingTimeout: 3, .remoteCallingTimeout: 4, .joinRTCSuccessed: 5,
            .stateMismatch: 9, .joinRTCStart: 10, .remoteUserRecvCall: 99, .localRejected: 100,
            .remoteRejected: 101, .remoteAccepted: 103, .localAccepted: 104, .localHangup: 105,
            .remoteHangup: 106, .remoteJoined: 107, .remoteLeft: 108, .localCancelled: 109,
            .remoteCancelled: 110, .localJoined: 111, .localLeft: 112, .recvRemoteFirstFrame: 113,
            .remoteCallBusy: 117, .captureFirstLocalVideoFrame: 119, .publishFirstLocalVideoFrame: 120,
            .publishFirstLocalAudioFrame: 130, .localVideoCall: 140, .localAudioCall: 141,
            .remoteVideoCall: 142, .remoteAudioCall: 143,
            .peerLost: 150, .answeredElsewhere: 151, .rejectedElsewhere: 152, .mediaReconnecting: 153,  // ours
            .mediaReconnected: 154,  // ours
        ]
        #expect(CallEvent.allCases.count == events.count)
        for (event, raw) in events { #expect(event.rawValue == raw, "\(event)") }
        #expect(CallErrorEvent.allCases.map(\.rawValue) == [0, 100, 110, 210])
        #expect(CallErrorCodeType.allCases.map(\.rawValue) == [0, 1, 2])
        #expect(CallType.video.rawValue == 0 && CallType.audio.rawValue == 1)
        #expect(CallLogLevel.allCases.map(\.rawValue) == [0, 1, 2])
    }

    @Test("Event-info keys are the existing API's")
    func eventInfoKeys() {
        #expect(
            [
                kRemoteUserId, kFromUserId, kFromRoomId, kFromUserExtension, kPublisher, kRejectReason,
                kHangupReason, kRejectByInternal, kCancelCallByInternal, kCostTimeMap,
            ] == [
                "remoteUserId", "fromUserId", "fromRoomId", "fromUserExtension", "publisher", "rejectReason",
                "hangupReason", "rejectByInternal", "cancelCallByInternal", "costTimeMap",
            ])
    }

    @Test("Event info reaches listeners as the existing API's Foundation values: user ids as UInt")
    func eventInfoTypes() throws {
        let h = CallHarness()
        let raw = RawInfoListener()
        h[2].api.addListener(listener: raw)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        let info = try #require(raw.infos.first)
        #expect(info[kFromUserId] as? UInt == 1)
        #expect(info[kRemoteUserId] as? UInt == 2)
        #expect(info[kFromRoomId] as? String == "room-1")
        withExtendedLifetime(raw) {}
    }
}

final class RawInfoListener: CallApiListenerProtocol {
    private let seen = Locked<[[String: any Sendable]]>([])
    var infos: [[String: any Sendable]] { seen.withLock { $0 } }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        var copy: [String: any Sendable] = [:]
        for (key, value) in eventInfo {
            switch value {
            case let v as UInt: copy[key] = v
            case let v as Int: copy[key] = v
            case let v as String: copy[key] = v
            default: copy[key] = "\(value)"
            }
        }
        seen.withLock { $0.append(copy) }
    }
}
