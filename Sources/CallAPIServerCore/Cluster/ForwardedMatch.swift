/// A matched call whose caller entered the queue on another node: that node tells the caller's session and places
/// the call there, where its call message will pass.
package struct ForwardedMatch: Sendable, Equatable {
    package var matchId: String
    package var tag: String
    /// The caller's session that entered the queue.
    package var callerSession: SessionID

    package init(matchId: String, tag: String, callerSession: SessionID) {
        self.matchId = matchId
        self.tag = tag
        self.callerSession = callerSession
    }
}
