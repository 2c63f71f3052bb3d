/// The offer/answer exchange with one peer, as a synchronous state machine: one input in, actions out.
///
/// The member with the lower uid offers and the other answers (``Role/init(localUid:remoteUid:)``), so two
/// members never offer at once. Remote ICE candidates that arrive before the remote description is applied wait in
/// the phase that expects it and are applied right after it. One negotiation per peer link: a later offer is ignored
/// (both sides always negotiate one audio and one video transceiver, and what flows is switched by valves and
/// ``WebRTCSignal/subscription(audio:video:)``, so there is nothing to renegotiate).
struct PeerNegotiation: Sendable, Equatable {
    /// Which side of the exchange this member plays.
    enum Role: Sendable, Equatable {
        case offerer, answerer

        /// The lower uid offers.
        init(localUid: UInt, remoteUid: UInt) {
            self = localUid < remoteUid ? .offerer : .answerer
        }
    }

    struct Candidate: Sendable, Equatable {
        var mline: UInt32
        var candidate: String
    }

    /// Where the exchange stands. Each phase before the remote description is applied holds the remote candidates
    /// that arrived meanwhile.
    enum Phase: Sendable, Equatable {
        /// Not started.
        case idle(waiting: [Candidate])
        /// Offerer: `create-offer` running.
        case creatingOffer(waiting: [Candidate])
        /// Offerer: offer applied locally and sent.
        case awaitingAnswer(waiting: [Candidate])
        /// Offerer: applying the peer's answer.
        case applyingAnswer(waiting: [Candidate])
        /// Answerer: waiting for the offer.
        case awaitingOffer(waiting: [Candidate])
        /// Answerer: applying the peer's offer.
        case applyingOffer(waiting: [Candidate])
        /// Answerer: the offer is applied; `create-answer` running.
        case creatingAnswer
        /// Both descriptions applied: media can flow.
        case stable
        /// Something failed; nothing more happens.
        case failed(String)
    }

    /// What happened.
    enum Input: Sendable, Equatable {
        /// The peer link is ready (pipeline playing): the offerer starts.
        case start
        /// `create-offer` or `create-answer` produced this SDP.
        case localDescriptionCreated(String)
        /// A signal from the peer (subscription, publishing and restart signals are not negotiation and change
        /// nothing here).
        case received(WebRTCSignal)
        /// `set-remote-description` finished.
        case remoteDescriptionApplied
        /// A step failed (no description, SDP did not parse, a promise carried an error).
        case failed(String)
    }

    /// What the engine must do for this peer.
    enum Action: Sendable, Equatable {
        case createOffer
        case createAnswer
        case applyLocal(SDPType, sdp: String)
        case applyRemote(SDPType, sdp: String)
        case addRemoteCandidate(mline: UInt32, candidate: String)
        case send(WebRTCSignal)
        /// Report a negotiation failure.
        case fail(String)
    }

    enum SDPType: Sendable, Equatable {
        case offer, answer
    }

    let role: Role
    private(set) var phase: Phase = .idle(waiting: [])

    init(localUid: UInt, remoteUid: UInt) {
        role = Role(localUid: localUid, remoteUid: remoteUid)
    }

    /// Both descriptions are applied: media can flow.
    var isComplete: Bool { phase == .stable }

    /// An answerer whose peer's offer has not arrived yet.
    var awaitsOffer: Bool {
        switch phase {
        case .idle, .awaitingOffer: role == .answerer
        default: false
        }
    }

    mutating func handle(_ input: Input) -> [Action] {
        switch (input, phase) {
        case (.failed, .failed):
            return []
        case (.failed(let reason), _):
            phase = .failed(reason)
            return [.fail(reason)]
        case (_, .failed):
            return []

        case (.start, .idle(let waiting)):
            switch role {
            case .offerer:
                phase = .creatingOffer(waiting: waiting)
                return [.createOffer]
            case .answerer:
                phase = .awaitingOffer(waiting: waiting)
                return []
            }

        case (.localDescriptionCreated(let sdp), .creatingOffer(let waiting)):
            phase = .awaitingAnswer(waiting: waiting)
            return [.applyLocal(.offer, sdp: sdp), .send(.offer(sdp: sdp))]
        case (.localDescriptionCreated(let sdp), .creatingAnswer):
            phase = .stable
            return [.applyLocal(.answer, sdp: sdp), .send(.answer(sdp: sdp))]

        case (.received(.offer(let sdp)), .idle(let waiting)) where role == .answerer,
            (.received(.offer(let sdp)), .awaitingOffer(let waiting)):
            phase = .applyingOffer(waiting: waiting)
            return [.applyRemote(.offer, sdp: sdp)]
        case (.received(.answer(let sdp)), .awaitingAnswer(let waiting)):
            phase = .applyingAnswer(waiting: waiting)
            return [.applyRemote(.answer, sdp: sdp)]
        case (.received(.iceCandidate(let mline, let candidate)), _):
            return received(Candidate(mline: mline, candidate: candidate))

        case (.remoteDescriptionApplied, .applyingOffer(let waiting)):
            phase = .creatingAnswer
            return waiting.map(Self.add) + [.createAnswer]
        case (.remoteDescriptionApplied, .applyingAnswer(let waiting)):
            phase = .stable
            return waiting.map(Self.add)

        default:
            return []
        }
    }

    /// A remote candidate: applied once the remote description is, kept until then.
    private mutating func received(_ candidate: Candidate) -> [Action] {
        switch phase {
        case .idle(let waiting): phase = .idle(waiting: waiting + [candidate])
        case .creatingOffer(let waiting): phase = .creatingOffer(waiting: waiting + [candidate])
        case .awaitingAnswer(let waiting): phase = .awaitingAnswer(waiting: waiting + [candidate])
        case .applyingAnswer(let waiting): phase = .applyingAnswer(waiting: waiting + [candidate])
        case .awaitingOffer(let waiting): phase = .awaitingOffer(waiting: waiting + [candidate])
        case .applyingOffer(let waiting): phase = .applyingOffer(waiting: waiting + [candidate])
        case .creatingAnswer, .stable: return [Self.add(candidate)]
        case .failed: break
        }
        return []
    }

    private static func add(_ candidate: Candidate) -> Action {
        .addRemoteCandidate(mline: candidate.mline, candidate: candidate.candidate)
    }
}
