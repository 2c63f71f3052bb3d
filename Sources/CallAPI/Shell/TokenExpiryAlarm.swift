import Foundation

/// Calls back a little before a token expires, for the signaling adapters' `onTokenPrivilegeWillExpire`.
/// Setting it again (a renewed token) replaces the earlier alarm.
package final class TokenExpiryAlarm: Sendable {
    private let task = Locked<Task<Void, Never>?>(nil)

    package init() {}

    /// Calls `fire` `leadSeconds` before `expiresAt`, at once if that moment has passed; nothing if
    /// `expiresAt` is nil.
    package func set(expiresAt: Date?, leadSeconds: Double, fire: @escaping @Sendable () -> Void) {
        let next = expiresAt.map { expiry in
            Task {
                let wait = expiry.timeIntervalSinceNow - leadSeconds
                if wait > 0 { try? await Task.sleep(for: .seconds(wait)) }
                if !Task.isCancelled { fire() }
            }
        }
        task.withLock { current in
            current?.cancel()
            current = next
        }
    }

    package func cancel() {
        task.withLock { current in
            current?.cancel()
            current = nil
        }
    }

    deinit { task.withLock { $0?.cancel() } }
}
