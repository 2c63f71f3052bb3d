/// One user's push devices as the cluster's device rows hold them (docs/scale-out.md): a node that changes a user's
/// devices writes the whole list, and the others replace theirs with it.
package struct UserDevices: Sendable, Equatable {
    package var userId: String
    /// Empty when the user's last device was removed.
    package var entries: [DeviceRegistry.Entry]

    package init(userId: String, entries: [DeviceRegistry.Entry]) {
        self.userId = userId
        self.entries = entries
    }
}
