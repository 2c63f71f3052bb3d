/// A callee device's accept, repeated to the other devices of its own user (docs/multi-device.md, "When the
/// caller sends no notice"): with a caller that will not tell them the call is settled, this is how a device
/// whose copy of the accept was lost still learns, and how two devices that both accepted agree on one.
package struct OwnDeviceNotice: Sendable, Equatable {
    /// The accept this device sent the caller, repeated unchanged: its timestamp orders the devices' accepts.
    package let accept: CallMessage
    /// The wait before the next repeat (the retry layer's backoff).
    var nextDelay: Int64

    /// Whether `other`, another device's accept of the same call, wins over this device's: the earlier accept
    /// wins, and of two at the same millisecond the lower device id. Every device orders the same two accepts
    /// the same way, so they agree without asking anyone.
    func losesTo(_ other: CallMessage) -> Bool {
        guard let mine = accept.deviceId, let theirs = other.deviceId else { return false }
        return (other.timestamp, theirs) < (accept.timestamp, mine)
    }
}
