import CallAPISignalProtocol

/// The push devices of every user: what a device store persists, and what the hub pushes to.
///
/// A pure value: registering and removing return whether anything changed, so the shell knows when to save.
public struct DeviceRegistry: Sendable, Equatable, Codable {
    /// One registered device.
    public struct Entry: Sendable, Equatable, Codable {
        public var device: PushDevice
        public var registeredAt: Int64

        package var summary: PushDeviceSummary {
            PushDeviceSummary(
                deviceId: device.deviceId, platform: device.platform, kind: device.kind, topic: device.topic,
                environment: device.environment, registeredAt: registeredAt)
        }
    }

    /// The most devices one user may register.
    public static let maxDevicesPerUser = 10

    /// Devices by user, each user's in registration order.
    public private(set) var users: [String: [Entry]] = [:]

    public init() {}

    /// How many devices are registered on the whole server.
    public var deviceCount: Int { users.values.reduce(0) { $0 + $1.count } }

    /// The devices of `userId`, oldest registration first.
    public func devices(of userId: String) -> [Entry] { users[userId] ?? [] }

    /// Whether `userId` has a device to push to.
    public func hasDevices(_ userId: String) -> Bool { !(users[userId] ?? []).isEmpty }

    /// Why `device` cannot be registered for `userId`, or nil when it was registered (replacing an entry with the
    /// same device id, or another user's entry with the same token: a token belongs to one app install).
    public mutating func register(_ device: PushDevice, for userId: String, now: Int64) -> String? {
        if let problem = device.problem { return problem }
        var entries = users[userId] ?? []
        let replacing = entries.contains { $0.device.deviceId == device.deviceId }
        guard replacing || entries.count < Self.maxDevicesPerUser else {
            return "user \(userId) already has \(entries.count) devices, the most kept; remove one first"
        }
        for (user, others) in users where user != userId {
            let kept = others.filter { $0.device.token != device.token || $0.device.platform != device.platform }
            if kept.count != others.count { users[user] = kept.isEmpty ? nil : kept }
        }
        entries.removeAll {
            $0.device.deviceId == device.deviceId
                || ($0.device.token == device.token && $0.device.platform == device.platform)
        }
        entries.append(Entry(device: device, registeredAt: now))
        users[userId] = entries
        return nil
    }

    /// Makes `entries` the devices of `userId` (none: the user has no device), as another node of a cluster saved
    /// them.
    package mutating func setDevices(_ entries: [Entry], of userId: String) {
        users[userId] = entries.isEmpty ? nil : entries
    }

    /// Removes `deviceId` of `userId`; returns whether it was there.
    @discardableResult
    public mutating func remove(deviceId: String, of userId: String) -> Bool {
        guard var entries = users[userId] else { return false }
        let before = entries.count
        entries.removeAll { $0.device.deviceId == deviceId }
        users[userId] = entries.isEmpty ? nil : entries
        return entries.count != before
    }

    /// Removes the device that has `token` (the provider said it is no longer valid), if it is still the one
    /// registered under `deviceId`; returns whether it was removed.
    @discardableResult
    public mutating func removeRejected(deviceId: String, of userId: String, token: String) -> Bool {
        guard let entry = users[userId]?.first(where: { $0.device.deviceId == deviceId }),
            entry.device.token == token
        else { return false }
        return remove(deviceId: deviceId, of: userId)
    }
}
