import CallAPIServerTesting
import Foundation
import Testing

/// A subcommand that fails while it runs (a server's refusal, a setting misspelt) prints its own usage, not the
/// top-level `callapi <subcommand>` one.
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
struct SubcommandErrorTests {
    @Test func aRefusedCallsCommandPrintsTheCallsUsage() async throws {
        let server = try await TestServer.start()
        let refused = try CLIProcess([
            "calls", "--server", server.httpBase, "--admin-key", "wrong", "--user", "1001",
        ])
        try await refused.expect("401")
        try await refused.expect("callapi calls list --server")
        #expect(try await refused.finish() != 0)
        try await refused.outputRead()
        #expect(refused.printedLines(containing: "callapi <subcommand>") == 0)
        try await server.stop()
    }

    @Test func aMisspeltServeSettingPrintsTheServeUsage() async throws {
        let serve = try CLIProcess(["serve", "--prot", "0"])
        try await serve.expect("--prot: no such setting")
        try await serve.expect("callapi serve")
        #expect(try await serve.finish() != 0)
        try await serve.outputRead()
        #expect(serve.printedLines(containing: "callapi <subcommand>") == 0)
    }
}
