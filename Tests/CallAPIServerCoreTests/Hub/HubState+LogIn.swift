@testable import CallAPIServerCore

extension HubState {
    /// Connects session `id` and logs it in as `user` with a token valid for an hour; returns the login's actions.
    @discardableResult
    mutating func logIn(_ id: SessionID, as user: String, now: Int64 = 0) -> [HubAction] {
        _ = handle(.connected(id), now: now)
        _ = handle(.frame(id, .login(.init(id: 1, token: "t"))), now: now)
        return handle(
            .tokenChecked(id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 3_600_000)),
            now: now)
    }
}
