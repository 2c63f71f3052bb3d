import CallAPITesting
import Testing

@testable import CallAPI

/// A send that fails, and the Swift-concurrency forms of the API.
@Suite("Send failures and async API")
struct SignalingFailureTests {
    @Test(
        "When the call message cannot be sent: onCallError(sendMessageFail), the completion fails, state stays calling")
    func callSendFails() {
        let h = CallHarness()
        h.network.setOnline(false, userId: 2)
        let probe = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(probe.errorMessage?.contains("offline") == true, "\(probe.errorMessage ?? "no error")")
        #expect(h[1].api.state == .calling, "the app may cancel")
        #expect(
            h[1].listener.records.contains {
                if case .error(.sendMessageFail, .message, _) = $0 { true } else { false }
            })
        #expect(!h[1].listener.events.contains(.remoteUserRecvCall))
        #expect(h[1].api.probe { $0.cancelCall(completion: $1) }.count == 1)
        #expect(h[1].api.state == .prepared)
    }

    @Test("The machine: a successful call send reports remoteUserRecvCall; a failed one reports the channel's error")
    func machineSendFinished() throws {
        var driver = MachineDriver(.prepared)
        let placed = driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c"))
        let message = try #require(placed.sent.first?.message)
        #expect(driver.handle(.sendFinished(message, to: 2, error: nil)).events == [.remoteUserRecvCall])
        let failed = driver.handle(.sendFinished(message, to: 2, error: SendFailure(code: 7, message: "down")))
        #expect(failed.contains(.notifyError(.sendMessageFail, .message, code: 7, message: "down")))
        #expect(driver.machine.state == .calling)
    }

    @Test("async forms: call, accept and hangup work; a refused request throws CallAPIError")
    func asyncAPI() async throws {
        let h = CallHarness()
        let changes = h[2].api.stateChanges
        try await h[1].api.call(remoteUserId: 2, callType: .audio, callExtension: ["k": .string("v")])
        try await h[2].api.accept(remoteUserId: 1)
        #expect(h[1].api.state == .connected)
        do {
            try await h[2].api.accept(remoteUserId: 1)
            Issue.record("accept in connected must throw")
        } catch let error as CallAPIError {
            #expect(error.code == .stateMismatch)
        }
        try await h[2].api.hangup(remoteUserId: 1)
        await h[2].api.deinitialize()
        var seen: [CallStateType] = []
        for await change in changes {
            seen.append(change.state)
            if change.state == .idle { break }
        }
        #expect(seen == [.calling, .connecting, .connected, .prepared, .idle])
    }
}
