/// Where a `ws://` or `wss://` URL points: what the socket connects to and what the upgrade request asks for.
struct WebSocketTarget: Sendable, Equatable {
    var secure: Bool
    var host: String
    var port: Int
    /// The path and query, `/` at least.
    var pathAndQuery: String

    /// `nil` unless `url` is `ws://` or `wss://` with a host (and, if given, a port from 1 to 65535).
    init?(_ url: String) {
        let secure: Bool
        let rest: Substring
        if url.hasPrefix("ws://") {
            (secure, rest) = (false, url.dropFirst(5))
        } else if url.hasPrefix("wss://") {
            (secure, rest) = (true, url.dropFirst(6))
        } else {
            return nil
        }
        let slash = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<slash]
        var path = String(rest[slash...])
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        // An IPv6 literal is bracketed: [::1]:8080.
        let host: Substring
        let portText: Substring?
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return nil }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
            portText = nil
        }
        guard !host.isEmpty, !host.contains("@") else { return nil }
        let port: Int
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { return nil }
            port = value
        } else {
            port = secure ? 443 : 80
        }
        self.secure = secure
        self.host = String(host)
        self.port = port
        self.pathAndQuery = path
    }

    /// The `Host` header: the host, and the port when it is not the scheme's default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// The name TLS checks the certificate against (none for an IP address, which SNI does not carry).
    var serverName: String? {
        let isIPv4 = host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
        return isIPv4 || host.contains(":") ? nil : host
    }
}
