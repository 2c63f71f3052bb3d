/// How CallAPI keeps a call from getting stuck when signaling loses, repeats or reorders messages, or a
/// peer vanishes. Applies between endpoints of this library; a peer that speaks only wire format 1.0 is
/// detected and gets 1.0 behaviour (no acknowledgements, no keep-alives), with the timers doing the cleanup.
///
/// The defaults, and why:
/// - the first retry after 500 ms (a signaling round trip is tens of milliseconds), then doubling up to 4 s,
///   for at most 20 s — longer than the 15 s ring timeout, so a cancel outlives the call it cancels;
/// - keep-alives every 2 s while ringing or connecting and every 3 s while connected;
/// - a peer silent for 8 s while ringing or connecting, or 15 s while connected, is gone: at 20% loss the
///   chance of that many keep-alives and their acknowledgements all being lost is below one in a million,
///   while a user waits at most a few seconds longer than a real network would take to notice;
/// - after the RTC engine reports the peer left the channel, 3 s for it to come back (or for its hangup).
public struct CallReliability: Sendable, Equatable {
    /// Delay before the first retry of an unacknowledged message; 0 turns acknowledgements and retries off.
    public var firstRetryMillis: Int64
    /// The longest delay between two retries.
    public var maxRetryIntervalMillis: Int64
    /// How long after its first send a message is retried at most.
    public var retryBoundMillis: Int64
    /// Keep-alive interval while calling or connecting; 0 turns keep-alives and liveness checks off.
    public var keepAliveRingingMillis: Int64
    /// Keep-alive interval while connected.
    public var keepAliveConnectedMillis: Int64
    /// A peer silent this long while calling or connecting is gone.
    public var peerSilenceRingingMillis: Int64
    /// A peer silent this long while connected is gone.
    public var peerSilenceConnectedMillis: Int64
    /// After the RTC engine says the peer left the channel, how long it may take to return; 0: no check.
    public var remoteLeftGraceMillis: Int64

    public init(
        firstRetryMillis: Int64 = 500, maxRetryIntervalMillis: Int64 = 4_000, retryBoundMillis: Int64 = 20_000,
        keepAliveRingingMillis: Int64 = 2_000, keepAliveConnectedMillis: Int64 = 3_000,
        peerSilenceRingingMillis: Int64 = 8_000, peerSilenceConnectedMillis: Int64 = 15_000,
        remoteLeftGraceMillis: Int64 = 3_000
    ) {
        self.firstRetryMillis = firstRetryMillis
        self.maxRetryIntervalMillis = maxRetryIntervalMillis
        self.retryBoundMillis = retryBoundMillis
        self.keepAliveRingingMillis = keepAliveRingingMillis
        self.keepAliveConnectedMillis = keepAliveConnectedMillis
        self.peerSilenceRingingMillis = peerSilenceRingingMillis
        self.peerSilenceConnectedMillis = peerSilenceConnectedMillis
        self.remoteLeftGraceMillis = remoteLeftGraceMillis
    }

    /// The defaults described above.
    public static let standard = CallReliability()

    /// Wire format 1.0 exactly: no acknowledgements, retries, keep-alives or remote-left checks.
    public static let off = CallReliability(
        firstRetryMillis: 0, keepAliveRingingMillis: 0, keepAliveConnectedMillis: 0, remoteLeftGraceMillis: 0)

    var acknowledges: Bool { firstRetryMillis > 0 }
    var keepsAlive: Bool { keepAliveRingingMillis > 0 && keepAliveConnectedMillis > 0 }
}
