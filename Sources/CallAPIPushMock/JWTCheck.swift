import Crypto
import Foundation
import _CryptoExtras

/// Reads and verifies a compact JWT with swift-crypto directly (independently of the JWT library the server
/// signs with): ES256 for APNs provider tokens, RS256 for FCM service-account assertions.
struct JWTCheck {
    var header: [String: Any]
    var claims: [String: Any]

    enum Key {
        case es256(P256.Signing.PublicKey)
        case rs256(_RSA.Signing.PublicKey)
    }

    /// The parts of `token` when its signature verifies with `key`, else a reason.
    static func verify(_ token: String, key: Key) -> Result<JWTCheck, JWTFailure> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = base64URL(parts[0]), let claimsData = base64URL(parts[1]),
            let signature = base64URL(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return .failure(.malformed) }
        let signed = Data((parts[0] + "." + parts[1]).utf8)
        let valid: Bool
        switch key {
        case .es256(let publicKey):
            guard header["alg"] as? String == "ES256",
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return .failure(.wrongAlgorithm) }
            valid = publicKey.isValidSignature(ecdsa, for: signed)
        case .rs256(let publicKey):
            guard header["alg"] as? String == "RS256" else { return .failure(.wrongAlgorithm) }
            valid = publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5)
        }
        guard valid else { return .failure(.badSignature) }
        return .success(JWTCheck(header: header, claims: claims))
    }

    static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// Why a JWT was refused.
enum JWTFailure: Error {
    case malformed
    case wrongAlgorithm
    case badSignature
}
