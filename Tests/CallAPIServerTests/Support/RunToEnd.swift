import Foundation

/// Runs `executable` with `arguments` to its end; returns its status and what it printed (stdout and stderr). For
/// short commands whose output is read once they are done: a file, not a pipe with a readability handler, and the
/// exit awaited without blocking a thread of the concurrency pool.
func runToEnd(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-run-\(UUID())")
    guard FileManager.default.createFile(atPath: output.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown)
    }
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = handle
    process.standardError = handle
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    try handle.close()
    return (status, try String(contentsOf: output, encoding: .utf8))
}
