import CallAPIServerTesting

extension TestServer {
    /// A raw socket logged in as `user`.
    func loggedIn(_ user: String) async throws -> RawSocket {
        let socket = RawSocket(url: url)
        try await socket.login(try await token(user))
        return socket
    }
}
