import CallAPIServerCore
import CallAPISignalProtocol
import Hummingbird

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The business server's way to place a call between two online users, with the admin key (docs/match.md):
///
/// - `POST /v1/calls` with `{"caller":"1001","callee":"1002","video":true}` (`video` optional, default true) →
///   201 `{"callId":"…"}`: the caller's newest session was told to place the call with that id.
/// - 404 `{"error":"offline","user":"1002","message":"…"}` when either user has no session;
///   409 `{"error":"busy","user":"1002","callId":"…","message":"…"}` when either is in an accepted call in the
///   ledger; 400 for a bad body, 413 for one over the admin body limit.
struct CallPlacementEndpoint: Sendable {
    let hub: SignalHub
    let authorization: AdminAuthorization
    let jsonBody: AdminJSONBody

    struct Body: Decodable {
        var caller: String
        var callee: String
        var video: Bool?
    }

    struct Placed: Encodable {
        var callId: String
    }

    struct Refused: Encodable {
        var error: String
        var user: String?
        var callId: String?
        var message: String
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/calls") { request, context -> Response in
            try authorization.check(request, endpoint: "the call placement endpoint")
            let body = try await jsonBody.decode(
                Body.self, from: request, example: "{\"caller\":\"1001\",\"callee\":\"1002\",\"video\":true}")
            for (field, user) in [("caller", body.caller), ("callee", body.callee)]
            where !SignalProtocol.isValidUserId(user) {
                throw HTTPError(.badRequest, message: "\"\(field)\" must be 1-64 characters of A-Z a-z 0-9 . _ -")
            }
            let order = PlaceCallOrder(
                caller: body.caller, callee: body.callee, media: body.video == false ? .audio : .video)
            switch hub.placeCall(order) {
            case .success(let callId):
                return json(.created, Placed(callId: callId))
            case .failure(.sameUser):
                throw HTTPError(.badRequest, message: "\"caller\" and \"callee\" must be different users")
            case .failure(.offline(let user)):
                return json(
                    .notFound,
                    Refused(error: "offline", user: user, message: "user \(user) is not online (no logged-in session)"))
            case .failure(.busy(let user, let callId)):
                return json(
                    .conflict,
                    Refused(error: "busy", user: user, callId: callId, message: "user \(user) is in call \(callId)"))
            }
        }
    }

    private func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding these plain structs of strings cannot fail.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
