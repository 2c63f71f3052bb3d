import CallAPI
import Foundation
import Testing

@testable import CallAPIMatrix

/// CallAPI's full calls over a real Matrix homeserver (Synapse), and the adapter's sync position.
@Suite(
    "Matrix adapter over Synapse",
    .enabled(if: AdapterServices.synapseURL != nil && AdapterServices.synapseSecret != nil, AdapterServices.noSynapse))
struct MatrixAdapterTests {
    let baseURL = AdapterServices.synapseURL ?? ""
    let secret = AdapterServices.synapseSecret ?? ""

    var flows: AdapterCallFlows {
        let baseURL = baseURL
        let secret = secret
        return AdapterCallFlows { user in
            let account = try await MatrixRegistration.account(user: "\(user)", secret: secret, baseURL: baseURL)
            var configuration = MatrixSignalClient.Configuration(baseURL: baseURL)
            configuration.pollTimeoutMillis = 2_000
            let client = MatrixSignalClient(configuration: configuration)
            try await client.login(account: account)
            return (client, { await client.logout() })
        }
    }

    @Test func videoCallAcceptedThenHungUp() async throws { try await flows.videoCallAcceptedThenHungUp() }
    @Test func rejectedCall() async throws { try await flows.rejected() }
    @Test func busyCalleeRejectsAThirdUser() async throws { try await flows.busy() }

    /// The homeserver vouches for the sender; a message sent while the receiver was logged out arrives when it
    /// logs in again, because the client resumes `/sync` from the position it kept.
    @Test func senderIsVouchedAndTheSyncPositionIsKeptAcrossLogins() async throws {
        let users = AdapterServices.users(2)
        let alice = MatrixSignalClient(configuration: .init(baseURL: baseURL))
        let bob = MatrixSignalClient(configuration: .init(baseURL: baseURL))
        try await alice.login(
            account: try await MatrixRegistration.account(user: "\(users[0])", secret: secret, baseURL: baseURL))
        try await bob.login(
            account: try await MatrixRegistration.account(user: "\(users[1])", secret: secret, baseURL: baseURL))
        let bobAccount = try #require(bob.account)
        let inbox = SenderInbox()
        bob.addListener(listener: inbox)
        try await send(alice, to: "\(users[1])", "first")
        let first = try await inbox.messages.first(within: 15, "the first message") { _ in true }
        #expect(first.message == "first" && first.sender == SignalSender(userId: "\(users[0])"))

        await bob.logout()
        let kept = try #require(bob.syncToken)
        try await send(alice, to: "\(users[1])", "while away")
        try await bob.login(account: bobAccount)
        let second = try await inbox.messages.first(within: 15, "the message sent while away") { _ in true }
        #expect(second.message == "while away")
        #expect(bob.syncToken != kept)
        await alice.logout()
        await bob.logout()
    }

    @Test func badTokenIsAClearErrorAndSendsFailWhenLoggedOut() async throws {
        let client = MatrixSignalClient(configuration: .init(baseURL: baseURL))
        let account = MatrixAccount(userId: "@u1:bench.localhost", accessToken: "not-a-token", deviceId: "D")
        let error = await #expect(throws: MatrixClientError.self) { try await client.login(account: account) }
        #expect(error?.isUnauthorized == true)
        let sendError = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            client.sendMessage(userId: "2", message: "x") { done.resume(returning: $0) }
        }
        #expect(sendError as? MatrixClientError == .notLoggedIn)
    }

    private func send(_ client: MatrixSignalClient, to user: String, _ message: String) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            client.sendMessage(userId: user, message: message) { error in
                if let error { done.resume(throwing: error) } else { done.resume() }
            }
        }
    }
}

/// Matrix ids and the registration MAC: no homeserver needed.
@Suite("Matrix adapter, offline")
struct MatrixOfflineTests {
    @Test func matrixIdsMapCallUsers() {
        #expect(MatrixAccount.matrixId(of: "42", serverName: "bench.localhost") == "@u42:bench.localhost")
        #expect(MatrixAccount.callUser(of: "@u42:bench.localhost") == "42")
        #expect(MatrixAccount.callUser(of: "@alice:x") == nil)
        let account = MatrixAccount(userId: "@u1:bench.localhost", accessToken: "t", deviceId: "D")
        #expect(account.serverName == "bench.localhost")
    }

    /// The shared-secret registration MAC (Synapse's docs: HMAC-SHA1 over nonce, user, password, "notadmin"
    /// joined by NUL bytes), checked against Python's `hmac.new(b"secret", ..., hashlib.sha1).hexdigest()`.
    @Test func registrationMac() {
        #expect(
            MatrixRegistration.mac(secret: "secret", nonce: "nonce", username: "u1", password: "pw")
                == "32e4c5c62c7df3899ab6cc7cca57fe954b7275ae")
    }

    @Test func baseURLLosesItsTrailingSlash() {
        #expect(MatrixSignalClient.Configuration(baseURL: "http://h:8008/").baseURL == "http://h:8008")
    }
}

/// Streams the messages a signal client delivers with their vouched sender.
final class SenderInbox: ISignalClientListener {
    struct Received: Sendable {
        var message: String
        var sender: SignalSender?
    }

    let messages: AsyncStream<Received>
    private let continuation: AsyncStream<Received>.Continuation

    init() { (messages, continuation) = AsyncStream.makeStream() }

    func onMessageReceive(message: String) { continuation.yield(Received(message: message, sender: nil)) }
    func onMessageReceive(message: String, from sender: SignalSender) {
        continuation.yield(Received(message: message, sender: sender))
    }
}
