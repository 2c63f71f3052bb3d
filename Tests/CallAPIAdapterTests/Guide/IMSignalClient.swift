// docs/adapters.md, step 2: the adapter. It is CallAPI's `ISignalClient` over the SDK, with the shape of
// the seeds' IM-backed signal clients: login, logout, token renewal and a connection listener.
import CallAPI
import Foundation

/// CallAPI's signaling over an IM SDK: each CallAPI message is one IM text message to the other user.
final class IMSignalClient: ISignalClient, IMSDKDelegate, @unchecked Sendable {
    private struct State {
        var loggedIn = false
        var listeners = SignalAdapterListeners()
    }

    private let sdk: any IMSDK
    // @unchecked Sendable: `state` is only touched under `lock` (the SDK calls back on its own threads).
    private let lock = NSLock()
    private var state = State()
    /// Thread-safe by itself. It keeps what arrives between login and CallAPI's `initialize` for CallAPI.
    private let messageListeners = SignalMessageListeners()

    init(sdk: any IMSDK) {
        self.sdk = sdk
        sdk.setDelegate(self)
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    func login(userId: String, token: String) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            sdk.login(userId: userId, token: token) { error in
                if let error { done.resume(throwing: error) } else { done.resume() }
            }
        }
        withState { $0.loggedIn = true }
        for listener in withState({ $0.listeners.connectionListeners }) { listener.onConnected() }
    }

    func logout() {
        withState { $0.loggedIn = false }
        sdk.logout()
    }

    func renewToken(_ token: String) { sdk.renewToken(token) }

    func addConnectionListener(_ listener: any ISignalConnectionListener) {
        withState { $0.listeners.add(listener) }
    }

    // MARK: ISignalClient

    func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        guard withState({ $0.loggedIn }) else {
            completion?(IMSignalClientError.notLoggedIn)  // at once, never queued
            return
        }
        sdk.send(text: message, to: userId) { completion?($0) }
    }

    func addListener(listener: any ISignalClientListener) { messageListeners.add(listener) }
    func removeListener(listener: any ISignalClientListener) { messageListeners.remove(listener) }

    // MARK: IMSDKDelegate

    func messageReceived(text: String, from sender: String) {
        // The IM service authenticated the sender: say so, and CallAPI trusts it over the message body.
        messageListeners.deliver(text, from: SignalSender(userId: sender))
    }

    func connectionChanged(connected: Bool) {
        guard withState({ $0.loggedIn }) else { return }
        for listener in withState({ $0.listeners.connectionListeners }) {
            if connected { listener.onConnected() } else { listener.onDisconnected(error: IMSignalClientError.lost) }
        }
    }

    func tokenWillExpire() {
        for listener in withState({ $0.listeners.connectionListeners }) { listener.onTokenPrivilegeWillExpire() }
    }
}

enum IMSignalClientError: Error, Equatable {
    case notLoggedIn
    case lost
}
