import Foundation
import Hummingbird
import NIOCore

/// The web clients (docs/web.md): the softphone at `/phone` and the JavaScript client's modules at `/callapi/`, from
/// the files compiled into the server (``WebFiles``), and the page's settings.
///
/// - `GET /phone` — the softphone; `GET /phone/{file}` — its script and style
/// - `GET /phone/config.json` — `{"development": true, "developmentAdminKey": "…", "ringTimeoutMillis": 15000}` on a
///   development server (the page mints its tokens with that public key, as `callapi phone` does), or
///   `{"development": false, "tokenUrl": "…"}` (`--phone-token-url`: the app's backend, which the page asks for
///   tokens with the user's own session)
/// - `GET /callapi/{file}` — the client's ES modules (`/callapi/index.js` exports them all)
struct WebClientEndpoint: Sendable {
    let development: Bool
    let tokenURL: String?

    func register(on router: Router<BasicRequestContext>) {
        router.get("/phone") { _, _ in try file("phone/index.html") }
        router.get("/phone/config.json") { _, _ in try config() }
        router.get("/phone/:file") { _, context in try file("phone/" + context.parameters.require("file")) }
        router.get("/callapi/:file") { _, context in try file("callapi/" + context.parameters.require("file")) }
    }

    private func file(_ path: String) throws -> Response {
        guard let file = WebFiles.byPath[path] else { throw HTTPError(.notFound, message: "no such file: /\(path)") }
        return Response(
            status: .ok,
            headers: [
                .contentType: file.contentType, .cacheControl: "no-cache", .init("X-Content-Type-Options")!: "nosniff",
            ],
            body: .init(byteBuffer: file.body))
    }

    /// What the page is told of this server.
    struct PageSettings: Encodable {
        var development: Bool
        var developmentAdminKey: String?
        var tokenUrl: String?
        var ringTimeoutMillis = 15000
    }

    private func config() throws -> Response {
        let settings = PageSettings(
            development: development, developmentAdminKey: development ? ServerSettings.developmentAdminKey : nil,
            tokenUrl: tokenURL)
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(settings))))
    }
}
