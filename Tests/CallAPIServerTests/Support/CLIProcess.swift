import CallAPIServerTesting
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#endif

/// The `callapi` executable built next to the test bundle, run as a child process with piped stdin/stdout.
final class CLIProcess: Sendable {
    /// The built `callapi`, if it is there (it is when the package's products were built with the tests).
    static let executable: String? = ServeProcess.executable

    private let process: Process
    private let input: Pipe
    /// Each line with when it was read from the pipe.
    private let lines: AsyncStream<TimedLine>
    private let buffer = NIOLockedValueBox("")
    /// Every line the process printed, for the failure message of an `expect` that timed out.
    private let transcript = NIOLockedValueBox<[String]>([])
    /// Whether the output pipe reached its end (every writer closed it).
    private let outputEnded = NIOLockedValueBox(false)

    /// The package's root folder, where the README's commands run.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../..").standardized

    /// Whether this build has the WebRTC engine: the manifest adds it when `CALLAPI_WEBRTC=1`, and `swift test`
    /// builds with the environment it runs in.
    static let buildsWebRTC: Bool = {
        #if os(Linux)
            ProcessInfo.processInfo.environment["CALLAPI_WEBRTC"] == "1"
        #else
            false
        #endif
    }()

    /// `callapi` with `arguments`, in `directory` (default: the tests' own working folder).
    convenience init(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil) throws {
        try self.init(
            executable: Self.executable!, arguments: arguments, environment: environment, directory: directory)
    }

    /// `callapi` with `arguments` inside the network namespace `namespace` (`ip netns exec`, which execs it: the
    /// process is `callapi` itself).
    convenience init(namespace: String, _ arguments: [String]) throws {
        try self.init(
            executable: NetworkLab.ipCommand, arguments: ["netns", "exec", namespace, Self.executable!] + arguments)
    }

    /// Any program with `arguments` inside the network namespace `namespace`.
    convenience init(namespace: String, program: String, _ arguments: [String]) throws {
        try self.init(executable: NetworkLab.ipCommand, arguments: ["netns", "exec", namespace, program] + arguments)
    }

    /// Another build of `callapi` (a release build, say), given by its path.
    convenience init(build path: String, _ arguments: [String]) throws {
        try self.init(executable: path, arguments: arguments)
    }

    /// A shell command line exactly as a user would type it, run by bash in the package's root folder.
    convenience init(shell commandLine: String) throws {
        try self.init(executable: "/bin/bash", arguments: ["-c", "exec " + commandLine], directory: Self.packageRoot)
    }

    private init(
        executable: String, arguments: [String], environment: [String: String] = [:], directory: URL? = nil
    ) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        input = Pipe()
        let output = Pipe()
        // Close-on-exec in this process: a process another test spawns meanwhile must not inherit the output's write
        // end and hold it open after this child exits (the child gets its own copies, on fds 0-2, without the flag).
        for handle in [input.fileHandleForReading, input.fileHandleForWriting, output.fileHandleForWriting] {
            _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let (stream, continuation) = AsyncStream.makeStream(of: TimedLine.self)
        lines = stream
        let buffer = buffer
        let transcript = transcript
        let outputEnded = outputEnded
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                outputEnded.withLockedValue { $0 = true }
                continuation.finish()
                return
            }
            let complete: [String] = buffer.withLockedValue { text in
                text += String(decoding: data, as: UTF8.self)
                var parts = text.components(separatedBy: "\n")
                text = parts.removeLast()
                return parts
            }
            transcript.withLockedValue { $0 += complete }
            let now = ContinuousClock.now
            for line in complete { continuation.yield(TimedLine(line: line, at: now)) }
        }
        try process.run()
    }

    /// Every line printed so far.
    var printed: [String] { transcript.withLockedValue { $0 } }

    /// Waits until the process's output has been read to its end: a process can exit before its last lines are
    /// read, so ``printed`` right after ``finish(within:)`` may miss them.
    /// (The wait is long: once, in CI, the end came 10 s after the child exited, as if another process held the pipe.)
    func outputRead(within seconds: Double = 30) async throws {
        let outputEnded = outputEnded
        try await withTimeout(seconds, "the process's output to end") {
            while !outputEnded.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    /// How many lines printed so far contain `text`.
    func printedLines(containing text: String) -> Int {
        transcript.withLockedValue { $0.count { $0.contains(text) } }
    }

    /// The child's process id.
    var processIdentifier: Int32 { process.processIdentifier }

    /// Types a line on the process's stdin.
    func type(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits for an output line containing `text`; returns it.
    @discardableResult
    func expect(_ text: String, within seconds: Double = 10) async throws -> String {
        try await expectTimed(text, within: seconds).line
    }

    /// Waits for an output line that `matches`; returns it.
    func expectLine(within seconds: Double = 10, where matches: @escaping @Sendable (String) -> Bool) async throws
        -> String
    {
        do {
            return try await lines.first(within: seconds, "a line of the expected form") { matches($0.line) }.line
        } catch {
            let printed = transcript.withLockedValue { $0 }.joined(separator: "\n")
            throw ExpectFailed(description: "\(error); the process printed:\n\(printed)")
        }
    }

    /// Waits for an output line containing `text`; returns it and when it was read from the process's output.
    func expectTimed(_ text: String, within seconds: Double = 10) async throws -> TimedLine {
        do {
            return try await lines.first(within: seconds, "a line with \"\(text)\"") { $0.line.contains(text) }
        } catch {
            let printed = transcript.withLockedValue { $0 }.joined(separator: "\n")
            throw ExpectFailed(description: "\(error); the process printed:\n\(printed)")
        }
    }

    /// Kills the process at once (SIGKILL), as a crash or a power cut would: nothing is said to anyone.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Asks the process to stop (SIGINT), as Ctrl-C in its terminal would.
    func interrupt() {
        process.interrupt()
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

/// A line a process printed, and when it was read from its output.
struct TimedLine: Sendable {
    var line: String
    var at: ContinuousClock.Instant
}

/// An `expect` that did not see its line, with everything the process printed.
struct ExpectFailed: Error, CustomStringConvertible {
    var description: String
}
