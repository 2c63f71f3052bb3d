import AsyncHTTPClient
import CallAPISystemCall
import Foundation
import NIOCore
import NIOSSL

/// Where a "killed" phone's pushes come from: the device side of `callapi push-mock` (`GET /device/<token>`), which
/// hands out what APNs or FCM would deliver to this device token, as the phone's OS would receive it.
struct PushWakeSource: Sendable {
    /// A push the device received.
    struct Delivery: Sendable {
        /// Its number for this device (from 0).
        var index: Int
        /// The payload, as the device received it.
        var payload: String
    }

    /// The longest wait of one request; the phone asks again after it.
    static let waitSeconds = 25

    private let base: String
    private let token: String
    private let client: HTTPClient

    /// - Parameters:
    ///   - mockURL: the mock's base URL, `https://127.0.0.1:<port>`.
    ///   - certificatePEM: the mock's self-signed certificate (`mock-ca.pem` in its `--dir`).
    init(mockURL: String, token: String, certificatePEM: String) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)))]
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(Int64(Self.waitSeconds + 10)))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        base = mockURL.hasSuffix("/") ? String(mockURL.dropLast()) : mockURL
        self.token = token
    }

    /// How many pushes the device has received so far.
    func deliveredCount() async throws -> Int {
        let (status, body, _) = try await get(devicePath)
        guard status == 200,
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let count = object["deliveries"] as? Int
        else { throw PushWakeError("the push mock answered \(status) \(body) to \(devicePath)") }
        return count
    }

    /// Waits for push number `index` (from 0) to the device, as long as it takes (until the task is cancelled).
    func delivery(_ index: Int) async throws -> Delivery {
        while true {
            try Task.checkCancellation()
            let (status, body, delivery) = try await get("\(devicePath)?next=\(index)&wait=\(Self.waitSeconds)")
            switch status {
            case 200:
                return Delivery(index: delivery.flatMap { Int($0) } ?? index, payload: body)
            case 204:
                continue
            default:
                throw PushWakeError("the push mock answered \(status) \(body)")
            }
        }
    }

    /// Reads a delivered payload as the system call screen would (both the APNs and the FCM data forms).
    static func call(in payload: String) throws -> SystemCallPush {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any] else {
            throw PushWakeError("the push is not a JSON object: \(payload.prefix(200))")
        }
        do {
            return try SystemCallPush(payload: object)
        } catch {
            throw PushWakeError("the push is not a call: \(error)")
        }
    }

    func shutdown() async {
        try? await client.shutdown()
    }

    private var devicePath: String {
        "/device/" + (token.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? token)
    }

    /// Status, body and the `x-delivery` header of a GET.
    private func get(_ path: String) async throws -> (Int, String, String?) {
        let request = HTTPClientRequest(url: base + path)
        let response = try await client.execute(request, timeout: .seconds(Int64(Self.waitSeconds + 10)))
        let body = try await response.body.collect(upTo: 64 * 1024)
        return (Int(response.status.code), String(buffer: body), response.headers.first(name: "x-delivery"))
    }
}

/// The push mock could not be asked, or delivered something that is not a call push.
struct PushWakeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
