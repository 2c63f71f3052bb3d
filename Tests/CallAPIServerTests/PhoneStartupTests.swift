import CallAPIServerTesting
import Foundation
import Testing

/// `callapi phone` as a new user meets it: a server that is not running, a token for someone else.
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
struct PhoneStartupTests {
    /// A loopback port nothing listens on: a server's, once it has stopped.
    func deadServer() async throws -> String {
        let server = try await TestServer.start()
        let port = server.port
        try await server.stop()
        return "ws://127.0.0.1:\(port)"
    }

    /// A phone for `server`; nothing checks the token while the server is down.
    func phone(_ server: String) throws -> CLIProcess {
        try CLIProcess(["phone", "--server", server, "--user", "1001", "--token", "any", "--media", "none"])
    }

    @Test func aPhoneConnectingToAServerThatIsNotRunningExitsAtQuit() async throws {
        let phone = try phone(try await deadServer())
        try await phone.expect("signaling: connecting")
        phone.type("quit")
        try await phone.expect("bye", within: 3)
        #expect(try await phone.finish(within: 3) == 0)
    }

    @Test func aPhoneConnectingToAServerThatIsNotRunningExitsAtTheEndOfItsInput() async throws {
        let phone = try phone(try await deadServer())
        try await phone.expect("signaling: connecting")
        // Closes stdin (the end of input, as `echo quit |` or Ctrl-D gives) and waits for the exit.
        #expect(try await phone.finish(within: 3) == 0)
    }

    @Test func aPhoneRefusesATokenForAnotherUser() async throws {
        let server = try await TestServer.start()
        let phone = try CLIProcess([
            "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", "1001", "--token",
            try await server.token("1002"), "--media", "none",
        ])
        try await phone.expect("the token is for user 1002, not 1001")
        #expect(try await phone.finish() != 0)
        try await phone.outputRead()
        #expect(phone.printedLines(containing: "call: prepared") == 0)
        try await server.stop()
    }
}
