/// The hub's push devices: a change is saved, and on a node of a cluster written for the other nodes, whose changes
/// come back the same way.
extension HubState {
    /// Saves the registry after `users`' devices changed; on a node of a cluster, their new lists go to the others.
    mutating func devicesChanged(of users: [String], into actions: inout [HubAction]) {
        guard !users.isEmpty else { return }
        actions.append(.push(.saveDevices(devices)))
        guard case .node = topology else { return }
        for user in users {
            actions.append(.cluster(.devices(UserDevices(userId: user, entries: devices.devices(of: user)))))
        }
    }

    /// The users whose devices differ from `before` (a registration may take a token from another user).
    func usersWithChangedDevices(since before: DeviceRegistry) -> [String] {
        Set(before.users.keys).union(devices.users.keys)
            .filter { before.devices(of: $0) != devices.devices(of: $0) }
            .sorted()
    }

    /// Device lists other nodes wrote: each replaces this node's list of that user, and the registry is saved once.
    mutating func devicesReported(_ lists: [UserDevices], into actions: inout [HubAction]) {
        var changed = false
        for list in lists where devices.devices(of: list.userId) != list.entries {
            devices.setDevices(list.entries, of: list.userId)
            changed = true
        }
        if changed { actions.append(.push(.saveDevices(devices))) }
    }
}
