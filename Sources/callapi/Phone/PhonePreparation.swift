import AsyncHTTPClient
import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPITesting
import Foundation
import NIOCore

/// Where the phone's RTC tokens come from: one token for any channel, or one per call's room minted by
/// the server's token endpoint (as an app's business server would).
struct PhoneTokenSource: Sendable {
    let server: String
    let user: UInt
    let rtcToken: String?
    let adminKey: String?

    /// The token endpoint for the signaling URL `server` (`ws` becomes `http`, `wss` becomes `https`).
    static func tokenEndpoint(server: String) -> String {
        var base = server
        if base.hasPrefix("ws://") { base = "http://" + base.dropFirst(5) }
        if base.hasPrefix("wss://") { base = "https://" + base.dropFirst(6) }
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/v1/tokens"
    }

    /// The provider for per-call tokens: none with a token for any channel; otherwise minted through the
    /// server's token endpoint with the admin key given or, without one, the development server's public key
    /// (which a server with a real secret refuses, so production stays strict).
    var provider: RTCTokenProvider? {
        if rtcToken != nil && adminKey == nil { return nil }
        let key = adminKey ?? ServerSettings.developmentAdminKey
        let usesDevelopmentKey = adminKey == nil
        let endpoint = Self.tokenEndpoint(server: server)
        return { channel, uid in
            do {
                return try await Self.mint(endpoint: endpoint, adminKey: key, channel: channel, uid: uid)
            } catch var error as PhoneTokenError where usesDevelopmentKey {
                error.hint = "this server is not in development mode: start the phone with --admin-key or --rtc-token"
                throw error
            }
        }
    }

    private struct Issued: Decodable {
        var token: String
    }

    private static func mint(endpoint: String, adminKey: String, channel: String, uid: UInt) async throws -> String {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(adminKey)")
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = try JSONSerialization.data(withJSONObject: ["userId": String(uid), "channel": channel, "ttl": 3600])
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let data = Data((try await response.body.collect(upTo: 64 * 1024)).readableBytesView)
        guard response.status == .ok else {
            throw PhoneTokenError(status: Int(response.status.code), body: String(decoding: data, as: UTF8.self))
        }
        return try JSONDecoder().decode(Issued.self, from: data).token
    }
}

/// The token endpoint refused.
struct PhoneTokenError: Error, CustomStringConvertible {
    var status: Int
    var body: String
    var hint: String?
    var description: String {
        "the token endpoint answered \(status): \(body)" + (hint.map { " (\($0))" } ?? "")
    }
}

/// The prepare config of each call: a fresh room (CallAPI's default), the token source and, with
/// `--snapshot`, a fresh snapshot canvas.
final class PhonePreparation: Sendable {
    struct Snapshot: Sendable {
        let canvas: any CallCanvas
        let path: String
    }

    let user: UInt
    let media: PhoneMedia
    let ringTimeoutMillis: UInt64
    let snapshotFolder: String?
    let tokens: PhoneTokenSource
    private let state = Locked<(count: Int, snapshot: Snapshot?)>((0, nil))

    init(user: UInt, media: PhoneMedia, ringTimeoutMillis: UInt64, snapshotFolder: String?, tokens: PhoneTokenSource) {
        self.user = user
        self.media = media
        self.ringTimeoutMillis = ringTimeoutMillis
        self.snapshotFolder = snapshotFolder
        self.tokens = tokens
    }

    /// The snapshot canvas of the call being prepared or under way.
    var currentSnapshot: Snapshot? { state.withLock { $0.snapshot } }

    /// The config for the next call.
    func next() -> PrepareConfig {
        let snapshot = state.withLock { state -> Snapshot? in
            state.count += 1
            guard let snapshotFolder else { return nil }
            let path = URL(fileURLWithPath: snapshotFolder)
                .appendingPathComponent("first-remote-frame-\(user)-\(state.count).png").path
            state.snapshot = PhoneEngineFactory.snapshotCanvas(path: path).map { Snapshot(canvas: $0, path: path) }
            return state.snapshot
        }
        return PrepareConfig(
            rtcToken: tokens.rtcToken ?? "", remoteView: snapshot?.canvas, callTimeoutMillisecond: ringTimeoutMillis,
            firstFrameWaittingDisabled: media == .none,
            // Simulated media joins no real room, so it needs no tokens (and must not fail a call for want of one).
            rtcTokenProvider: media == .webrtc ? tokens.provider : nil)
    }
}
