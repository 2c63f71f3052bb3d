import Crypto

/// The operator console's login, kept in a cookie so the admin key never travels in a URL: `<expiresAt>.<hex HMAC>`,
/// the HMAC-SHA256 of `callapi-console|<expiresAt>` keyed with the admin key. Stateless: a restart keeps operators
/// logged in, and changing the admin key logs everyone out.
struct ConsoleSession: Sendable {
    let adminKey: String

    /// The cookie's name.
    static let cookie = "callapi_console"
    /// How long a login lasts: a working day.
    static let lifetimeMillis: Int64 = 12 * 3_600_000

    /// A cookie value valid until `now` plus ``lifetimeMillis``.
    func token(now: Int64) -> String {
        let expiresAt = now + Self.lifetimeMillis
        return "\(expiresAt).\(signature(expiresAt))"
    }

    /// Whether `token` is one this key made and it has not expired at `now`.
    func isValid(_ token: String, now: Int64) -> Bool {
        let parts = token.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let expiresAt = Int64(parts[0]), expiresAt > now else { return false }
        return constantTimeEquals(String(parts[1]), signature(expiresAt))
    }

    /// The console cookie's value among a request's `Cookie` headers, if it sent one.
    static func token(inCookieHeaders headers: [String]) -> String? {
        for header in headers {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                if trimmed.hasPrefix("\(cookie)=") { return String(trimmed.dropFirst(cookie.count + 1)) }
            }
        }
        return nil
    }

    private func signature(_ expiresAt: Int64) -> String {
        let code = HMAC<SHA256>.authenticationCode(
            for: Array("callapi-console|\(expiresAt)".utf8), using: SymmetricKey(data: Array(adminKey.utf8)))
        return code.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}
