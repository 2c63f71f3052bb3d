import ArgumentParser
import CallAPI
import CallAPIPushMock
import Crypto
import Foundation
import _CryptoExtras

/// `callapi push-mock`: a local stand-in for APNs and FCM, for the walk-through: `callapi serve` points at it.
struct PushMockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-mock",
        abstract: "Run a local APNs + FCM mock (HTTP/2 over TLS) that checks and prints every push.",
        discussion: """
            It makes a fresh APNs key, FCM service account and TLS certificate, writes them to --dir, and prints the \
            `callapi serve` flags that send pushes to it. Requests are checked as APNs and FCM check them (path, \
            headers, JWT signature, payload); each push is printed as one line. It also plays the phones' side: \
            `GET /device/<token>?next=N&wait=S` answers the N-th push accepted for that device token (from 0) as \
            the device would receive it, waiting up to S seconds (`callapi phone --sleep-until-push` uses it).
            """)

    @Option(help: "Port (default 0: a free one).") var port: Int = 0
    @Option(help: "Directory for the generated key files (default: a new temporary directory).") var dir: String?

    func run() async throws {
        let directory = URL(
            fileURLWithPath: dir ?? NSTemporaryDirectory()
                + "callapi-push-mock-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let apnsKey = P256.Signing.PrivateKey()
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let projectId = "callapi-mock"
        let email = "push@callapi-mock.iam.gserviceaccount.com"
        let mock = PushMock(
            apns: .init(keyId: "MOCKKEY001", teamId: "MOCKTEAM01", publicKey: apnsKey.publicKey),
            fcm: .init(projectId: projectId, clientEmail: email, keyId: "mock-rsa", publicKey: rsa.publicKey),
            now: { SystemCallClock().nowMillis() })
        let server = try await PushMockServer.start(mock, port: port)
        let account: [String: String] = [
            "type": "service_account", "project_id": projectId, "private_key_id": "mock-rsa",
            "private_key": rsa.pemRepresentation, "client_email": email, "token_uri": server.tokenURL,
        ]
        let files = [
            ("apns-key.p8", apnsKey.pemRepresentation),
            ("fcm-service-account.json", String(decoding: try JSONEncoder().encode(account), as: UTF8.self)),
            ("mock-ca.pem", server.certificatePEM),
        ]
        for (name, text) in files {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }
        let path = directory.path
        Self.emit(
            """
            callapi push-mock: listening on \(server.baseURL) (HTTP/2, TLS)
            run the server with:
              callapi serve --apns-key \(path)/apns-key.p8 --apns-key-id MOCKKEY001 --apns-team-id MOCKTEAM01 \\
                --apns-url \(server.baseURL) --apns-sandbox-url \(server.baseURL) \\
                --fcm-service-account \(path)/fcm-service-account.json --fcm-url \(server.baseURL) \\
                --push-ca-file \(path)/mock-ca.pem
            a phone that sleeps until its push (the mock delivers each push it accepts to its device token):
              callapi phone ... --push-token <token> --sleep-until-push --push-mock \(server.baseURL) \\
                --push-ca-file \(path)/mock-ca.pem
            """)
        var printed = 0
        while true {
            let pushes = await mock.waitForPushes(printed + 1)
            for push in pushes.dropFirst(printed) {
                Self.emit(
                    "push \(push.provider.rawValue) \(push.status)\(push.reason.isEmpty ? "" : " " + push.reason) "
                        + "type=\(push.headers["apns-push-type"] ?? "data") \(push.body)")
            }
            printed = pushes.count
        }
    }

    /// Writes a line at once, even into a pipe (unlike buffered `print`): a script reads the pushes as they come.
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
