import CallAPIServer
import CallAPIServerCore
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPISignalClient

/// The push parts of the wire: marks set from CallAPI messages, the new frames, and the server's push settings.
@Suite struct PushWireTests {
    static func callAPI(_ action: Int, extra: String = "") -> String {
        "{\"message_action\":\(action),\"message_version\":\"1.0\",\"fromUserId\":1001,\"callId\":\"c-1\"\(extra)}"
    }

    @Test func callsAreMarkedCallAndCancelsWithdraw() {
        #expect(
            CallPushMarking.mark(
                forCallAPIMessage: Self.callAPI(0, extra: ",\"fromUserExtension\":{\"displayName\":\"Ada\",\"n\":1}"))
                == .call(callId: "c-1", callerName: "Ada", video: true))
        #expect(
            CallPushMarking.mark(forCallAPIMessage: Self.callAPI(10))
                == .call(callId: "c-1", callerName: nil, video: false))
        #expect(
            CallPushMarking.mark(forCallAPIMessage: Self.callAPI(1, extra: ",\"cancelCallByInternal\":1"))
                == .withdraw(callId: "c-1", reason: .expired))
        #expect(
            CallPushMarking.mark(forCallAPIMessage: Self.callAPI(1)) == .withdraw(callId: "c-1", reason: .cancelled))
        // Accepts and rejects answer (withdrawing the pushes to the callee's other devices).
        #expect(CallPushMarking.mark(forCallAPIMessage: Self.callAPI(2)) == .answer(callId: "c-1", accepted: true))
        #expect(CallPushMarking.mark(forCallAPIMessage: Self.callAPI(3)) == .answer(callId: "c-1", accepted: false))
        // Hangups, keep-alives, acks and anything that is not a CallAPI message are not marked.
        for action in [4, 20, 21] { #expect(CallPushMarking.mark(forCallAPIMessage: Self.callAPI(action)) == nil) }
        #expect(CallPushMarking.mark(forCallAPIMessage: "hello") == nil)
    }

    @Test func pushFramesRoundTrip() throws {
        let frames: [ClientFrame] = [
            .send(
                .init(id: 1, to: "1002", body: "b", ttl: 5, push: .call(callId: "c", callerName: "Ada", video: true))),
            .registerDevice(.init(id: 2, device: PushTestKit.apnsDevice())),
            .devices(.init(id: 3)),
            .removeDevice(.init(id: 4, deviceId: "iphone")),
        ]
        for frame in frames {
            #expect(try FrameCoding.decodeClientFrame(FrameCoding.encode(frame)).get() == frame)
        }
        let server: [ServerFrame] = [
            .callWithdrawn(.init(callId: "c", reason: .expired, at: 5)),
            .devices(
                .init(
                    id: 3,
                    devices: [
                        .init(
                            deviceId: "d", platform: .fcm, kind: .alert, topic: nil, environment: nil, registeredAt: 1)
                    ])),
        ]
        for frame in server {
            #expect(try FrameCoding.decodeServerFrame(FrameCoding.encode(frame)).get() == frame)
        }
        #expect(FrameCoding.encode(frames[0]).contains("\"push\":{"))
    }

    @Test func pushSettingsComeFromFlagsAndIncompleteAPNsSettingsAreRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.p8")
        try Data("-----BEGIN PRIVATE KEY-----".utf8).write(to: key)
        let configuration = try ServerSettings.configuration(
            flags: [
                "data-dir": directory.path, "push-ring-seconds": "20", "apns-key": key.path, "apns-key-id": "K",
                "apns-team-id": "T", "apns-url": "https://127.0.0.1:9/",
            ], environment: [:])
        #expect(configuration.push.devicesFile == directory.path + "/devices.json")
        #expect(configuration.push.policy.ringSeconds == 20)
        #expect(configuration.push.apns?.keyId == "K")
        #expect(configuration.push.apns?.productionURL == "https://127.0.0.1:9")
        #expect(throws: ServerSettings.InvalidSetting.self) {
            try ServerSettings.configuration(flags: ["apns-key-id": "K"], environment: [:])
        }
        #expect(throws: ServerSettings.InvalidSetting.self) {
            try ServerSettings.configuration(
                flags: ["apns-key": key.path, "apns-key-id": "K", "apns-team-id": "T", "apns-url": "http://x"],
                environment: [:])
        }
    }
}
