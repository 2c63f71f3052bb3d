/// How far the server's clock is from this device's, as the client estimates it over the signaling socket.
///
/// The server's time is this device's time plus ``offsetMillis``, within ± ``errorMillis``. Each sample is a
/// request and its answer stamped with the server's time (`ping` and `pong`, the login and `welcome`): the server
/// read its clock somewhere between the request leaving and the answer arriving, so the sample's error is half its
/// round trip. The estimate is the sample with the smallest round trip of the last few (NTP's filter), which is
/// the tightest bound and the least bent by one slow direction.
public struct ClockOffset: Sendable, Equatable, Codable {
    /// Server time minus local time, in milliseconds.
    public var offsetMillis: Int64
    /// How far off ``offsetMillis`` may be either way: half the round trip of the sample it comes from.
    public var errorMillis: Int64
    /// The samples it was chosen from.
    public var samples: Int

    public init(offsetMillis: Int64, errorMillis: Int64, samples: Int) {
        self.offsetMillis = offsetMillis
        self.errorMillis = errorMillis
        self.samples = samples
    }

    /// `localMillis` on the server's clock.
    public func serverTime(ofLocal localMillis: Int64) -> Int64 { localMillis + offsetMillis }
}
