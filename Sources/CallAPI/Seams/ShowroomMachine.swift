/// When a host's showroom publishes: while no call is connected; from `connected` until the call ends the
/// host stays in the showroom (its audience stays, and sees the pause) but publishes nothing there.
///
/// Pure and synchronous; ``Showroom`` performs its actions on the engine.
package struct ShowroomMachine: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        case closed
        /// In the showroom, publishing as `media` says.
        case live(media: RTCMediaOptions)
        /// In the showroom, publishing paused for a connected call; `media` is what to resume with.
        case pausedForCall(media: RTCMediaOptions)
    }

    package enum Input: Sendable, Equatable {
        case open(media: RTCMediaOptions)
        case close
        /// The call endpoint's new state.
        case callState(CallStateType)
    }

    package enum Action: Sendable, Equatable {
        case join(media: RTCMediaOptions)
        case updateMedia(RTCMediaOptions)
        case leave
    }

    package private(set) var state = State.closed

    package init() {}

    package mutating func handle(_ input: Input) -> [Action] {
        switch (state, input) {
        case (.closed, .open(let media)):
            state = .live(media: media)
            return [.join(media: media)]
        case (.live, .open), (.pausedForCall, .open), (.closed, .close), (.closed, .callState):
            return []
        case (.live, .close), (.pausedForCall, .close):
            state = .closed
            return [.leave]
        case (.live(let media), .callState(.connected)):
            state = .pausedForCall(media: media)
            return [.updateMedia(media.withoutPublishing)]
        case (.live, .callState):
            return []
        case (.pausedForCall(let media), .callState(let callState)) where !callState.isInCall:
            state = .live(media: media)
            return [.updateMedia(media)]
        case (.pausedForCall, .callState):
            return []
        }
    }
}
