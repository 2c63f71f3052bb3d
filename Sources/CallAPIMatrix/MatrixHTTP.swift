import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// JSON over HTTP to a Matrix homeserver: one request, its status and its decoded body.
struct MatrixHTTP: Sendable {
    let http: HTTPClient
    let baseURL: String

    /// Sends `body` (JSON) and decodes the answer as `Answer`; a status other than 200 is a
    /// ``MatrixClientError/http(status:body:)``.
    func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, body: (any Encodable)? = nil, token: String? = nil,
        timeout: TimeAmount = .seconds(30), as answer: Answer.Type
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        }
        let response = try await http.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else {
            throw MatrixClientError.http(status: response.status.code, body: String(buffer: bytes))
        }
        return try JSONDecoder().decode(Answer.self, from: Data(bytes.readableBytesView))
    }
}

/// A JSON object whose contents the caller ignores.
struct MatrixEmptyAnswer: Decodable, Sendable {}
