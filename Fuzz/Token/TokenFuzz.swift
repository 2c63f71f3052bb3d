// libFuzzer target: arbitrary bytes as a token whose signature checked out, through the server's own claim
// rules (scope, subject, channel, representable times) for both login and RTC tokens.
//
// The signature and JSON parsing of real tokens are JWTKit's (not compiled into this target); here the payload
// segment is read the way JWTKit reads it: base64url, then JSON with `exp`/`iat` as numbers of seconds. Inputs
// that are not a three-segment JWT are read as the payload JSON itself, so the fuzzer reaches the rules quickly.
// Checks, besides not crashing: an accepted expiry is the claim in milliseconds, within 1970...9999.

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

private struct Claims: Decodable {
    var sub: String
    var exp: Double
    var iat: Double
    var scope: String?
    var chn: String?
}

private func payload(of text: String) -> [UInt8] {
    let segments = text.split(separator: ".", omittingEmptySubsequences: false)
    guard segments.count == 3 else { return Array(text.utf8) }
    var base64 = String(segments[1].map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
    while base64.count % 4 != 0 { base64 += "=" }
    guard let data = Data(base64Encoded: base64) else { return [] }
    return Array(data)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzToken(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(payload(of: text))) else { return 0 }
    let login = TokenClaimRules.login(sub: claims.sub, exp: claims.exp, iat: claims.iat, scope: claims.scope)
    let channel = TokenClaimRules.channel(
        sub: claims.sub, exp: claims.exp, iat: claims.iat, scope: claims.scope, chn: claims.chn)
    let expiries = [try? login.get().expiresAt, try? channel.get().expiresAt].compactMap { $0 }
    for expiresAt in expiries {
        guard expiresAt >= 0, expiresAt <= 253_402_300_799_000, abs(Double(expiresAt) - claims.exp * 1000) <= 1 else {
            fatalError("exp \(claims.exp) was accepted as \(expiresAt) ms")
        }
    }
    return 0
}
