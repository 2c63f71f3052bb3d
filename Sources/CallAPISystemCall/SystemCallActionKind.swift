/// The actions a system call screen asks of the app, each of which the app must fulfill or fail.
public enum SystemCallActionKind: Sendable, Equatable, CaseIterable {
    /// The user answered (CallKit's `CXAnswerCallAction`).
    case answer
    /// The user ended or declined (`CXEndCallAction`).
    case end
    /// The user muted or unmuted (`CXSetMutedCallAction`).
    case mute
}
