/// The `message_action` of a call message (wire format 1.0).
///
/// Code that reads an action switches over this enum exhaustively (no `default`), so that an action added here does
/// not compile until every reader has decided what it means.
///
/// `@usableFromInline`, its tests inlinable: CallAPI's machine tests a received message's action several times per
/// message, and across the module boundary each `==` went through the `Equatable` witness
/// (`scripts/callgrind_machine.sh`).
@usableFromInline
package enum MessageAction: Int, Sendable, CaseIterable {
    case videoCall = 0
    case cancelCall = 1
    case accept = 2
    case reject = 3
    case hangup = 4
    case audioCall = 10
    /// Ours: acknowledges a message (`ackMessageId`); older clients ignore it.
    case ack = 20
    /// Ours: "still here" during a call; acknowledged like any message.
    case keepAlive = 21

    /// A video or an audio call.
    @inlinable package var isCall: Bool { self == .videoCall || self == .audioCall }

    /// The messages of the 1.0 call flow (not acknowledgements or keep-alives).
    @inlinable package var isCallFlow: Bool { self != .ack && self != .keepAlive }
}
