import CallAPIServerCore
import Hummingbird
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the JSON body of an admin request, at most ``limit`` bytes (`--admin-body-limit`): a larger body is
/// answered 413 before it is read whole, at once when its `Content-Length` says so, else as soon as the limit is
/// passed; a body that is not the JSON expected is answered 400 with an example.
struct AdminJSONBody: Sendable {
    /// The default limit: the admin bodies are a few dozen bytes.
    static let defaultLimit = 64 * 1024

    let limit: Int

    func decode<Body: Decodable>(_ type: Body.Type, from request: Request, example: String) async throws -> Body {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            throw tooLarge("\(declared) bytes")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge("more than \(limit) bytes")
        }
        do {
            return try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView))
        } catch {
            throw HTTPError(.badRequest, message: "the body must be JSON like \(example)")
        }
    }

    private func tooLarge(_ size: String) -> HTTPError {
        HTTPError(
            .contentTooLarge,
            message: "the body is \(size); admin requests take at most \(limit) bytes (--admin-body-limit)")
    }
}
