import CallAPI
import Testing

/// docs/adapters.md's example adapter, exercised: a full CallAPI call over it, its connection listener, and
/// its refusals.
@Suite("Adapter guide: an IM SDK signal client")
struct IMSignalClientTests {
    @Test func fullCallsRunOverTheIMAdapter() async throws {
        let service = FakeIMService()
        let flows = AdapterCallFlows { user in
            let client = IMSignalClient(sdk: service.client())
            try await client.login(userId: "\(user)", token: "token-1")
            return (client, { client.logout() })
        }
        try await flows.videoCallAcceptedThenHungUp()
        try await flows.rejected()
        try await flows.busy()
    }

    @Test func listenerHearsConnectionAndTokenExpiry() async throws {
        let service = FakeIMService()
        let sdk = service.client()
        let client = IMSignalClient(sdk: sdk)
        let events = ConnectionEvents()
        client.addConnectionListener(events)
        try await client.login(userId: "7", token: "token-2")
        try await events.next(.connected)
        service.blip()
        try await events.next(.disconnected)
        try await events.next(.connected)
        sdk.warnTokenExpiry()
        try await events.next(.tokenWillExpire)
        client.renewToken("token-3")
        #expect(sdk.renewedTokens == ["token-3"])
    }

    @Test func badTokenAndLoggedOutSendsAreClearErrors() async throws {
        let client = IMSignalClient(sdk: FakeIMService().client())
        await #expect(throws: FakeIMService.Refused.self) { try await client.login(userId: "7", token: "wrong") }
        let error = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            client.sendMessage(userId: "8", message: "x") { done.resume(returning: $0) }
        }
        #expect(error as? IMSignalClientError == .notLoggedIn)
    }
}
