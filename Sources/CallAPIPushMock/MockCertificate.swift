import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A self-signed certificate for 127.0.0.1 and localhost, made in memory when the mock starts (no key files).
struct MockCertificate: Sendable {
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey
    /// The certificate as PEM: what a client adds to its trusted roots.
    let pem: String

    static func make() throws -> MockCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName("callapi push mock")
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey), notValidBefore: now - 3600,
            notValidAfter: now + 7 * 24 * 3600, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                KeyUsage(digitalSignature: true, keyCertSign: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                ])
            }, issuerPrivateKey: Certificate.PrivateKey(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return MockCertificate(
            certificate: try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der),
            privateKey: try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der),
            pem: try certificate.serializeAsPEM().pemString)
    }
}
