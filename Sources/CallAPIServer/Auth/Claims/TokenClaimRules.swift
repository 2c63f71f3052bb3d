// The token fuzz target compiles this file into one module with the protocol's sources (scripts/fuzz.sh).
#if canImport(CallAPISignalProtocol)
    import CallAPISignalProtocol
#endif

/// The rules a token's claims must meet once its signature is verified: scope, subject, channel, and times this
/// server can represent. Expiry against the clock is left to the hubs. Free of the JWT library, so that the
/// token fuzz target compiles it as is.
enum TokenClaimRules {
    /// The scope of login tokens (an absent scope means this too).
    static let signalScope = "signal"
    /// The scope of RTC tokens.
    static let rtcScope = "rtc"
    /// Latest time a claim may name: the end of year 9999, as JWT libraries and databases commonly bound dates.
    static let latestClaimSeconds: Double = 253_402_300_799

    /// Why claims are refused.
    struct Refusal: Error, Equatable {
        var message: String
    }

    /// A login token's user id and expiry (ms since 1970).
    static func login(sub: String, exp: Double, iat: Double, scope: String?) -> Result<
        (userId: String, expiresAt: Int64), Refusal
    > {
        if let scope, scope != signalScope {
            return .failure(Refusal(message: "a \"\(scope)\" token cannot log in to signaling"))
        }
        guard SignalProtocol.isValidUserId(sub) else {
            return .failure(Refusal(message: "the token's subject is not a valid user id"))
        }
        return expiry(exp: exp, iat: iat).map { (sub, $0) }
    }

    /// An RTC token's user id, channel and expiry (ms since 1970).
    static func channel(sub: String, exp: Double, iat: Double, scope: String?, chn: String?) -> Result<
        (userId: String, channel: String, expiresAt: Int64, issuedAt: Int64), Refusal
    > {
        guard scope == rtcScope else {
            return .failure(
                Refusal(message: "a \"\(scope ?? signalScope)\" token cannot join a channel; use an RTC token"))
        }
        guard let chn, chn == ChannelProtocol.anyChannel || ChannelProtocol.isValidChannel(chn) else {
            return .failure(Refusal(message: "the RTC token names no valid channel"))
        }
        guard SignalProtocol.isValidUserId(sub) else {
            return .failure(Refusal(message: "the token's subject is not a valid user id"))
        }
        // `expiry` checked `iat` is representable.
        return expiry(exp: exp, iat: iat).map { (sub, chn, $0, millis(iat) ?? 0) }
    }

    /// The expiry in milliseconds, once `exp` and `iat` are checked to be times this server can represent (a
    /// signed token may carry any JSON number, e.g. `1e300`, and converting that to an integer would trap).
    static func expiry(exp: Double, iat: Double) -> Result<Int64, Refusal> {
        guard let expiresAt = millis(exp) else {
            return .failure(Refusal(message: "the token's \"exp\" is not a time between 1970 and 9999"))
        }
        guard millis(iat) != nil else {
            return .failure(Refusal(message: "the token's \"iat\" is not a time between 1970 and 9999"))
        }
        return .success(expiresAt)
    }

    /// Seconds since 1970 as whole milliseconds, or `nil` when not finite or outside 1970...9999.
    static func millis(_ seconds: Double) -> Int64? {
        guard seconds.isFinite, seconds >= 0, seconds <= latestClaimSeconds else { return nil }
        return Int64((seconds * 1000).rounded())
    }
}
