import Foundation

/// A call as the system call screen shows it.
public struct SystemCallReport: Sendable, Equatable {
    /// The system's identifier of the call (see ``CallUUID``).
    public var uuid: UUID
    /// The call's id in CallAPI.
    public var callId: String
    /// The other user's id: the handle the system shows and keeps in its call history.
    public var remoteUserId: UInt
    /// The name to show, when known.
    public var displayName: String?
    /// A video call (else audio only).
    public var video: Bool

    public init(uuid: UUID, callId: String, remoteUserId: UInt, displayName: String?, video: Bool) {
        self.uuid = uuid
        self.callId = callId
        self.remoteUserId = remoteUserId
        self.displayName = displayName
        self.video = video
    }
}
