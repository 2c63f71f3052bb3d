import CallAPI

/// Which deployed CallAPI 2.x client a ``LegacyCallEndpoint`` behaves like. Every difference is a fact of
/// `docs/spec/wire-format.md` ("Envelope", the busy paragraph, "How the deployed clients treat repeats")
/// read from that client's code.
public enum LegacyFlavour: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The iOS (and Android) client, 2.x.
    case iOS
    /// The Web client, 1.0.0-beta.
    case web

    public var description: String { rawValue }

    /// The iOS client counts its messages in `messageId`; the Web client sends none.
    public var sendsMessageId: Bool { self == .iOS }

    /// The Web client leaves action 10 (an audio call) unhandled.
    public var answersAudioCalls: Bool { self == .iOS }

    /// The `rejectReason` of its automatic busy reject.
    public var busyReason: String { self == .iOS ? kRejectReasonCallBusy : "busy" }

    /// The Web client has no `remoteCallingTimeout` reason: a timeout cancel shows as a plain remote cancel.
    var reportsRemoteCallingTimeout: Bool { self == .iOS }

    /// The Web client moves to connecting on an accept from anyone while calling; iOS checks the sender.
    var acceptsAcceptFromAnyone: Bool { self == .web }

    /// The Web client treats the peer leaving the RTC channel as its hangup.
    var endsCallWhenPeerLeavesChannel: Bool { self == .web }

    /// A call from the user it is already calling: the Web client rings again (restarting its ring timer)
    /// in any state; the iOS client only updates the call while calling and rings again once connecting or
    /// connected.
    var ringsAgainWhileCalling: Bool { self == .web }
}
