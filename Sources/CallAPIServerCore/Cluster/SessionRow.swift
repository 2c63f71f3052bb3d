/// A logged-in session as the cluster's presence rows hold it (docs/scale-out.md): the other nodes count it as its
/// user being online, and know which push device it runs on.
package struct SessionRow: Sendable, Equatable {
    package var session: SessionID
    package var userId: String
    /// The push device the session named at login (`deviceId`); `nil` when it named none.
    package var device: String?

    package init(session: SessionID, userId: String, device: String? = nil) {
        self.session = session
        self.userId = userId
        self.device = device
    }
}
