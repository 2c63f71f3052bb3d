import CallAPIServerCore
import Hummingbird

/// The admin key check of the operator endpoints (`POST /v1/tokens`, `/v1/channels/…`).
struct AdminAuthorization: Sendable {
    /// The key requests must send as `Authorization: Bearer <key>`; `nil` disables the endpoints.
    let adminKey: String?

    /// Throws 403 when the endpoints are disabled, 401 without the right key.
    func check(_ request: Request, endpoint: String) throws {
        guard let adminKey else {
            throw HTTPError(.forbidden, message: "\(endpoint) is disabled: start the server with --admin-key")
        }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            constantTimeEquals(String(header.dropFirst("Bearer ".count)), adminKey)
        else {
            throw HTTPError(.unauthorized, message: "send the admin key as \"Authorization: Bearer <key>\"")
        }
    }
}

/// Compares without stopping at the first difference, so timing does not reveal the key.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var difference = UInt8(x.count == y.count ? 0 : 1)
    for index in 0..<max(x.count, y.count) {
        difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
    }
    return difference == 0
}
