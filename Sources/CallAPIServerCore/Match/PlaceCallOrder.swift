import CallAPISignalProtocol

/// A call the business server asks the server to place (`POST /v1/calls`, docs/match.md).
public struct PlaceCallOrder: Sendable, Equatable {
    /// The user whose client places the call.
    public var caller: String
    /// The user it calls.
    public var callee: String
    /// Video or audio.
    public var media: CallMedia

    public init(caller: String, callee: String, media: CallMedia) {
        self.caller = caller
        self.callee = callee
        self.media = media
    }
}
