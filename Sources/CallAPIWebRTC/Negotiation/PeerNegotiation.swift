/// The offer/answer exchange with one peer, as a synchronous state machine: inputs in, actions out.
///
/// The member with the lower uid offers and the other answers (``Role/init(localUid:remoteUid:)``), so two
/// members never offer at once. Remote ICE candidates that arrive before the remote description is applied
/// are kept and applied right after it. One negotiation per peer link: a later offer is ignored (both
/// sides always negotiate one audio and one video transceiver, and what flows is switched by valves and
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

    enum Phase: Sendable, Equatable {
        /// Not started.
        case idle
        /// Offerer: `create-offer` running.
        case creatingOffer
        /// Offerer: offer applied locally and sent.
        case awaitingAnswer
        /// Answerer: waiting for the offer.
        case awaitingOffer
        /// Answerer: applying the offer, then creating the answer.
        case answering
        /// Both descriptions applied (from this side's view).
        case stable
        /// Something failed; nothing more happens.
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

    struct Candidate: Sendable, Equatable {
        var mline: UInt32
        var candidate: String
    }

    let role: Role
    private(set) var phase: Phase = .idle
    private(set) var remoteApplied = false
    private(set) var pendingCandidates: [Candidate] = []

    /// Both descriptions are applied: media can flow.
    var isComplete: Bool { phase == .stable && remoteApplied }

    init(localUid: UInt, remoteUid: UInt) {
        role = Role(localUid: localUid, remoteUid: remoteUid)
    }

    /// The peer link is ready (pipeline playing): the offerer starts.
    mutating func start() -> [Action] {
        guard phase == .idle else { return [] }
        switch role {
        case .offerer:
            phase = .creatingOffer
            return [.createOffer]
        case .answerer:
            phase = .awaitingOffer
            return []
        }
    }

    /// `create-offer` or `create-answer` produced `sdp`.
    mutating func localDescriptionCreated(_ sdp: String) -> [Action] {
        switch phase {
        case .creatingOffer:
            phase = .awaitingAnswer
            return [.applyLocal(.offer, sdp: sdp), .send(.offer(sdp: sdp))]
        case .answering where remoteApplied:
            phase = .stable
            return [.applyLocal(.answer, sdp: sdp), .send(.answer(sdp: sdp))]
        default:
            return []
        }
    }

    /// A signal from the peer (subscription and publishing signals are not negotiation and are ignored here).
    mutating func received(_ signal: WebRTCSignal) -> [Action] {
        switch signal {
        case .offer(let sdp):
            guard role == .answerer, phase == .awaitingOffer || phase == .idle else { return [] }
            phase = .answering
            return [.applyRemote(.offer, sdp: sdp)]
        case .answer(let sdp):
            guard role == .offerer, phase == .awaitingAnswer else { return [] }
            phase = .stable
            return [.applyRemote(.answer, sdp: sdp)]
        case .iceCandidate(let mline, let candidate):
            if case .failed = phase { return [] }
            guard remoteApplied else {
                pendingCandidates.append(Candidate(mline: mline, candidate: candidate))
                return []
            }
            return [.addRemoteCandidate(mline: mline, candidate: candidate)]
        case .subscription, .publishing, .restart:
            return []
        }
    }

    /// `set-remote-description` finished: apply the kept candidates; the answerer now answers.
    mutating func remoteDescriptionApplied() -> [Action] {
        guard !remoteApplied else { return [] }
        if case .failed = phase { return [] }
        remoteApplied = true
        var actions = pendingCandidates.map { Action.addRemoteCandidate(mline: $0.mline, candidate: $0.candidate) }
        pendingCandidates = []
        if phase == .answering { actions.append(.createAnswer) }
        return actions
    }

    /// A step failed (no description, SDP did not parse, a promise carried an error).
    mutating func failed(_ reason: String) -> [Action] {
        if case .failed = phase { return [] }
        phase = .failed(reason)
        pendingCandidates = []
        return [.fail(reason)]
    }
}
