/// The media of a call.
public enum CallType: Int, Sendable, CaseIterable {
    /// Audio and video.
    case video = 0
    /// Audio only.
    case audio = 1
}
