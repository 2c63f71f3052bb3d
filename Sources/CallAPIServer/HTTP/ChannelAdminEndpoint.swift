import CallAPIServerCore
import CallAPISignalProtocol
import Hummingbird

/// The operator's channel endpoints, with the admin key:
///
/// - `GET /v1/channels/{channel}` → `{"channel":"c","members":[1001,1002],"devices":[{"uid":1001},
///   {"uid":1002,"device":"phone-1"},{"uid":1002,"device":"tablet-1"}]}` (`members` sorted, each uid once;
///   `devices` every member in join order)
/// - `POST /v1/channels/{channel}/kick` with `{"uid":1001,"barSeconds":60,"reason":"text"}` (`barSeconds` and
///   `reason` optional) → `{"kicked":true,"barredUntil":1800000060000}`. The bar applies even when the uid is not in
///   the channel; `barSeconds` 0 lifts a bar.
///
/// In a cluster, a channel with no member on this node may meet on another: a request for it is sent there with
/// 307 and the node's advertised address, or refused with 409 naming the node when it advertises none.
struct ChannelAdminEndpoint: Sendable {
    let hub: ChannelHub
    let homes: ClusterChannelHomes?
    let authorization: AdminAuthorization
    let jsonBody: AdminJSONBody

    /// The longest bar: 30 days.
    static let maxBarSeconds = 30 * 24 * 3600
    /// The longest kick reason, in characters.
    static let maxReasonLength = 200

    struct KickBody: Decodable {
        var uid: UInt
        var barSeconds: Int?
        var reason: String?
    }

    struct KickAnswer: ResponseEncodable {
        var kicked: Bool
        var barredUntil: Int64?

        enum CodingKeys: String, CodingKey { case kicked, barredUntil }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kicked, forKey: .kicked)
            // Always present: null when there is no bar.
            try container.encode(barredUntil, forKey: .barredUntil)
        }
    }

    struct Members: ResponseEncodable {
        var channel: String
        var members: [UInt]
        var devices: [ChannelMember]
    }

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/channels/:channel") { request, context -> Members in
            try authorization.check(request, endpoint: "the channel endpoint")
            let channel = try channelParameter(context)
            let (members, devices) = hub.members(of: channel)
            if devices.isEmpty { try await sendToHome(of: channel, request) }
            return Members(channel: channel, members: members, devices: devices)
        }
        router.post("/v1/channels/:channel/kick") { request, context -> KickAnswer in
            try authorization.check(request, endpoint: "the channel endpoint")
            let channel = try channelParameter(context)
            if hub.members(of: channel).devices.isEmpty { try await sendToHome(of: channel, request) }
            let body = try await jsonBody.decode(
                KickBody.self, from: request, example: "{\"uid\":1001,\"barSeconds\":60,\"reason\":\"text\"}")
            guard body.uid > 0 else {
                throw HTTPError(.badRequest, message: "\"uid\" must be a positive integer")
            }
            let barSeconds = body.barSeconds ?? 0
            guard (0...Self.maxBarSeconds).contains(barSeconds) else {
                throw HTTPError(.badRequest, message: "\"barSeconds\" must be 0 to \(Self.maxBarSeconds)")
            }
            if let reason = body.reason, reason.count > Self.maxReasonLength {
                throw HTTPError(.badRequest, message: "\"reason\" must be at most \(Self.maxReasonLength) characters")
            }
            let (kicked, barredUntil) = hub.kick(
                channel: channel, uid: body.uid, barSeconds: barSeconds, reason: body.reason)
            return KickAnswer(kicked: kicked, barredUntil: barredUntil)
        }
    }

    /// Throws the answer that sends `request` to the node where `channel` meets, when that is another node.
    private func sendToHome(of channel: String, _ request: Request) async throws {
        guard let homes, case .elsewhere(let node, let url) = await homes.holder(of: channel) else { return }
        guard let url else {
            throw HTTPError(
                .conflict,
                message: "channel \(channel) meets on node \(node), which advertises no address: ask it there")
        }
        var base = url.hasPrefix("ws") ? "http" + url.dropFirst(2) : url
        while base.hasSuffix("/") { base.removeLast() }
        var headers = HTTPFields()
        headers[.location] = base + request.uri.description
        throw HTTPError(.temporaryRedirect, headers: headers, message: "channel \(channel) meets on node \(node)")
    }

    private func channelParameter(_ context: BasicRequestContext) throws -> String {
        guard let channel = context.parameters.get("channel"), ChannelProtocol.isValidChannel(channel) else {
            throw HTTPError(.badRequest, message: "the channel must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        return channel
    }
}
