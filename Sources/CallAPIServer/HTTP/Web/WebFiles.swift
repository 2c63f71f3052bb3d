import Foundation
import NIOCore

/// The files of the web clients (the package's `Web` folder: the JavaScript client under `callapi/`, the softphone
/// under `phone/`), compiled into the server by the EmbedWebFiles plugin and decoded once.
enum WebFiles {
    struct File: Sendable {
        let contentType: String
        let body: ByteBuffer
    }

    /// Every file by its path under `Web` (`phone/index.html`).
    static let byPath: [String: File] = {
        var files: [String: File] = [:]
        for (path, base64) in embedded {
            // The plugin wrote what it read: a file that does not decode is a broken build, not a runtime case.
            guard let bytes = Data(base64Encoded: base64) else { preconditionFailure("\(path) is not base64") }
            files[path] = File(contentType: contentType(of: path), body: ByteBuffer(bytes: bytes))
        }
        return files
    }()

    static func contentType(of path: String) -> String {
        switch path.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json"
        case "png": "image/png"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }
}
