import CallAPI

/// An IM service in memory, whose clients conform to ``IMSDK``: what the adapter example is tested against.
final class FakeIMService: Sendable {
    struct Refused: Error, Equatable {}

    private let clients = Locked<[String: FakeIMClient]>([:])
    /// The tokens the service accepts.
    let validTokens: Set<String>

    init(validTokens: Set<String> = ["token-1", "token-2"]) { self.validTokens = validTokens }

    func client() -> FakeIMClient { FakeIMClient(service: self) }

    fileprivate func register(_ client: FakeIMClient, as user: String?) {
        clients.withLock { clients in
            clients = clients.filter { $0.value !== client }
            if let user { clients[user] = client }
        }
    }

    fileprivate func deliver(_ text: String, to user: String, from sender: String) -> Bool {
        guard let client = clients.withLock({ $0[user] }) else { return false }
        client.delegate?.messageReceived(text: text, from: sender)
        return true
    }

    /// Drops every client's connection for a moment, as a network change would.
    func blip() {
        for client in clients.withLock({ Array($0.values) }) {
            client.delegate?.connectionChanged(connected: false)
            client.delegate?.connectionChanged(connected: true)
        }
    }
}

final class FakeIMClient: IMSDK {
    private struct State {
        var user: String?
        weak var delegate: (any IMSDKDelegate)?
        var renewedTokens: [String] = []
    }

    private let service: FakeIMService
    private let state = Locked(State())

    fileprivate init(service: FakeIMService) { self.service = service }

    fileprivate var delegate: (any IMSDKDelegate)? { state.withLock { $0.delegate } }
    var renewedTokens: [String] { state.withLock { $0.renewedTokens } }

    func login(userId: String, token: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard service.validTokens.contains(token) else { return completion(FakeIMService.Refused()) }
        state.withLock { $0.user = userId }
        service.register(self, as: userId)
        completion(nil)
    }

    func logout() {
        state.withLock { $0.user = nil }
        service.register(self, as: nil)
    }

    func renewToken(_ token: String) { state.withLock { $0.renewedTokens.append(token) } }

    func send(text: String, to userId: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard let sender = state.withLock({ $0.user }) else { return completion(FakeIMService.Refused()) }
        completion(service.deliver(text, to: userId, from: sender) ? nil : FakeIMService.Refused())
    }

    func setDelegate(_ delegate: (any IMSDKDelegate)?) { state.withLock { $0.delegate = delegate } }

    /// The SDK's token-expiry warning, as the IM service would send it.
    func warnTokenExpiry() { delegate?.tokenWillExpire() }
}
