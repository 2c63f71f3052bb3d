import AsyncHTTPClient
import CallAPIPushMock
import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalProtocol
import Crypto
import NIOSSL
import _CryptoExtras

/// Keys, a running push mock and the server settings that point at it.
struct PushTestKit: Sendable {
    let clock: TestClock
    let mockServer: PushMockServer
    let apns: APNsSettings
    let fcm: FCMSettings
    var mock: PushMock { mockServer.mock }

    static let teamId = "TEAM123456"
    static let keyId = "KEY1234567"
    static let projectId = "callapi-test"
    static let bundleId = "com.example.callapp"

    /// RSA key generation is slow: one key for the whole test run.
    static let rsaKey: _RSA.Signing.PrivateKey = {
        // A 2048-bit key (jwt-kit refuses smaller ones).
        (try? _RSA.Signing.PrivateKey(keySize: .bits2048))!
    }()

    static func start(clock: TestClock = TestClock()) async throws -> PushTestKit {
        let apnsKey = P256.Signing.PrivateKey()
        let rsa = rsaKey
        let mock = PushMock(
            apns: .init(keyId: keyId, teamId: teamId, publicKey: apnsKey.publicKey),
            fcm: .init(
                projectId: projectId, clientEmail: "push@\(projectId).iam.gserviceaccount.com", keyId: "rsa-key-1",
                publicKey: rsa.publicKey),
            now: { clock.nowMillis() })
        let server = try await PushMockServer.start(mock)
        var apns = APNsSettings(privateKeyPEM: apnsKey.pemRepresentation, keyId: keyId, teamId: teamId)
        apns.productionURL = server.baseURL
        apns.sandboxURL = server.baseURL
        var fcm = FCMSettings(
            account: FCMServiceAccount(
                projectId: projectId, clientEmail: "push@\(projectId).iam.gserviceaccount.com",
                privateKeyId: "rsa-key-1", privateKey: rsa.pemRepresentation, tokenURI: server.tokenURL))
        fcm.endpoint = server.baseURL
        return PushTestKit(clock: clock, mockServer: server, apns: apns, fcm: fcm)
    }

    /// An HTTP client that trusts the mock's certificate.
    func httpClient() throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [
            .certificates(try NIOSSLCertificate.fromPEMBytes(Array(mockServer.certificatePEM.utf8)))
        ]
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
    }

    /// The server's push configuration for this mock.
    func pushConfiguration(devicesFile: String? = nil) -> PushConfiguration {
        var push = PushConfiguration()
        push.apns = apns
        push.fcm = fcm
        push.trustedRootPEM = mockServer.certificatePEM
        push.devicesFile = devicesFile
        return push
    }

    static func apnsDevice(
        _ id: String = "iphone", token: String = String(repeating: "ab", count: 32), kind: PushDevice.Kind = .voip
    )
        -> PushDevice
    {
        PushDevice(
            deviceId: id, platform: .apns, kind: kind, token: token, topic: bundleId, environment: .sandbox)
    }

    static func fcmDevice(_ id: String = "pixel", token: String = "fcm-token-1") -> PushDevice {
        PushDevice(deviceId: id, platform: .fcm, kind: .voip, token: token)
    }

    func stop() async {
        await mockServer.stop()
    }
}
