import Foundation
import NIOConcurrencyHelpers

/// The `callapi` executable built next to the test bundle, run as a child process with piped stdin/stdout.
final class CLIProcess: Sendable {
    /// The built `callapi`, if it is there (it is when the package's products were built with the tests).
    static let executable: String? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("callapi").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    private let process: Process
    private let input: Pipe
    private let lines: AsyncStream<String>
    private let buffer = NIOLockedValueBox("")

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable!)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        lines = stream
        let buffer = buffer
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                continuation.finish()
                return
            }
            let complete: [String] = buffer.withLockedValue { text in
                text += String(decoding: data, as: UTF8.self)
                var parts = text.components(separatedBy: "\n")
                text = parts.removeLast()
                return parts
            }
            for line in complete { continuation.yield(line) }
        }
        try process.run()
    }

    /// Types a line on the process's stdin.
    func type(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits for an output line containing `text`; returns it.
    @discardableResult
    func expect(_ text: String, within seconds: Double = 10) async throws -> String {
        try await lines.first(within: seconds, "a line with \"\(text)\"") { $0.contains(text) }
    }

    /// Kills the process at once (SIGKILL), as a crash or a power cut would: nothing is said to anyone.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Closes stdin and waits for the exit status.
    func finish(within seconds: Double = 10) async throws -> Int32 {
        try? input.fileHandleForWriting.close()
        let process = process
        return try await withTimeout(seconds, "the process to exit") {
            while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            return process.terminationStatus
        }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
