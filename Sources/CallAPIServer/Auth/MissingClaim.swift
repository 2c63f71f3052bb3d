import CallAPIServerCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The claim a token leaves out, when the JWT library refused it as malformed because a required claim is missing:
/// so that the refusal names it ("the token has no \"iat\" claim") rather than calling the token malformed.
enum MissingClaim {
    /// The claims every token the server accepts carries (docs/protocol.md, Tokens).
    static let required = ["sub", "exp", "iat"]

    /// The first required claim absent from `token`'s payload; nil when the payload is not a JSON object (the
    /// token is malformed indeed) or has every required claim.
    static func name(in token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = base64URLDecoded(parts[1]),
            let names = try? JSONDecoder().decode(ClaimNames.self, from: payload).names
        else { return nil }
        return required.first { !names.contains($0) }
    }

    private static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    /// The names of a JSON object's members.
    private struct ClaimNames: Decodable {
        var names: Set<String>

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            names = Set(try decoder.container(keyedBy: Key.self).allKeys.map(\.stringValue))
        }
    }
}
