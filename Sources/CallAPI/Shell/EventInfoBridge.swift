extension Dictionary where Key == String, Value == JSONValue {
    /// Event info as the existing API hands it to listeners: Foundation values, user ids as `UInt`.
    var eventInfoForListeners: [String: Any] {
        var result = mapValues(\.anyValue)
        for key in [kFromUserId, kRemoteUserId, kPublisher] {
            if let id = self[key]?.intValue, id >= 0 { result[key] = UInt(id) }
        }
        return result
    }
}
