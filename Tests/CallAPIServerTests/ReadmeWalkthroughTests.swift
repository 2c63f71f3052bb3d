import Foundation
import Testing

/// The README's three-terminal walk-through, run with exactly the commands the README shows (read from it),
/// in the package's root folder: a development server, a phone that answers, a phone that calls. With real
/// media where this build has it (the phones take no media flags either way).
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"), .serialized)
struct ReadmeWalkthroughTests {
    /// The command block of `terminal` (`server`, `callee` or `caller`): its first line is the command, the
    /// lines after it what the user types into it.
    static func block(_ terminal: String) throws -> [String] {
        let readme = try String(
            contentsOf: CLIProcess.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = "<!-- walkthrough:\(terminal) -->\n```sh\n"
        let start = try #require(readme.range(of: marker), "README.md has no \(marker)")
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    @Test func readmeThreeTerminalWalkthroughPlacesAndEndsACall() async throws {
        let serverBlock = try Self.block("server")
        let calleeBlock = try Self.block("callee")
        let callerBlock = try Self.block("caller")
        #expect(serverBlock.count == 1 && calleeBlock.count == 1 && callerBlock.count == 2)

        let server = try CLIProcess(shell: serverBlock[0])
        try await server.expect("listening on ws://127.0.0.1:8080/v1/signal")
        let callee = try CLIProcess(shell: calleeBlock[0])
        try await callee.expect("call: prepared", within: 30)
        let caller = try CLIProcess(shell: callerBlock[0])
        try await caller.expect("call: prepared", within: 30)
        try await callee.expect("presence: 1001 is online")

        caller.type(callerBlock[1])  // call 1002
        try await callee.expect("call: calling (remoteVideoCall) peer 1001")
        callee.type("accept")
        let connected = CLIProcess.buildsWebRTC ? "call: connected (recvRemoteFirstFrame)" : "call: connected"
        try await caller.expect(connected, within: 20)
        try await callee.expect(connected, within: 20)
        caller.type("hangup")
        try await caller.expect("call: prepared (localHangup)")
        try await callee.expect("call: prepared (remoteHangup)")

        caller.type("quit")
        #expect(try await caller.finish() == 0)
        callee.type("quit")
        #expect(try await callee.finish() == 0)
        server.interrupt()
        #expect(try await server.finish() == 0)
    }
}
