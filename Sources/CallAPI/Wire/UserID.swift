/// How user ids are read from what others send: in the body as JSON integers, from the signaling channel as
/// decimal strings. One id has one spelling, so that no other text can stand for it.
enum UserID {
    /// The largest id the wire carries: ids are JSON integers, which this library reads as `Int`.
    static let maximum = UInt(Int.max)

    /// A `fromUserId` or `remoteUserId` from a message body: a non-negative integer.
    static func wire(_ value: JSONValue) -> UInt? {
        value.intValue.flatMap { $0 >= 0 ? UInt($0) : nil }
    }

    /// A sender id the signaling channel vouches for, accepted only in canonical decimal form: ASCII digits,
    /// no sign, no spaces, no leading zero (except `"0"` itself), at most ``maximum``. `UInt(_:)` alone
    /// would read `"01001"` and `"+1001"` as 1001, letting whoever holds a token for such a name act as 1001.
    /// One pass over the bytes, checking and reading them at once (a check, then `UInt(_:)`, read them twice).
    static func canonical(_ text: String) -> UInt? {
        var id: UInt = 0
        var count = 0
        for byte in text.utf8 {
            // At most 19 digits: they cannot overflow (UInt.max has 20), and `maximum` has 19.
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), count < 19, count == 0 || id != 0
            else { return nil }
            id = id * 10 + UInt(byte - UInt8(ascii: "0"))
            count += 1
        }
        guard count > 0, id <= maximum else { return nil }
        return id
    }
}
