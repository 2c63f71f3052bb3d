import Foundation
import Testing

/// `callapi serve` as an operator starts it: where its files go, and what its start-up banner says.
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
struct ServeStartupTests {
    let secret = "test-secret-0123456789-0123456789-abcdef"

    /// A fresh folder, removed by `body`'s end.
    func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder.resolvingSymlinksInPath())
    }

    @Test func aDevelopmentServerSaysItKeepsTheLedgerInTheCurrentFolderByItsFullPath() async throws {
        try await withFolder { folder in
            let serve = try CLIProcess(["serve", "--port", "0"], directory: folder)
            let ledger = folder.appendingPathComponent("callapi-ledger.sqlite").path
            try await serve.expect("listening on ws://")
            try await serve.expect("ledger  sqlite \(ledger)")
            try await serve.expect("data    \(folder.path) (the current folder")
            serve.interrupt()
            #expect(try await serve.finish() == 0)
        }
    }

    @Test func aProductionServerKeepsItsFilesInThePlatformDataFolderNotTheCurrentOne() async throws {
        try await withFolder { folder in
            let data = folder.appendingPathComponent("xdg")
            let started = folder.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: started, withIntermediateDirectories: true)
            let serve = try CLIProcess(
                ["serve", "--port", "0", "--secret", secret], environment: ["XDG_DATA_HOME": data.path],
                directory: started)
            let ledger = data.appendingPathComponent("callapi/callapi-ledger.sqlite").path
            try await serve.expect("listening on ws://")
            try await serve.expect("ledger  sqlite \(ledger)")
            serve.interrupt()
            #expect(try await serve.finish() == 0)
            #expect(FileManager.default.fileExists(atPath: ledger))
            #expect(
                !FileManager.default.fileExists(atPath: started.appendingPathComponent("callapi-ledger.sqlite").path))
        }
    }

    @Test func theBannerSaysTheTokenEndpointIsOffWithoutAnAdminKeyAndWhichPushServicesAreOn() async throws {
        try await withFolder { folder in
            let serve = try CLIProcess(["serve", "--port", "0", "--secret", secret, "--data-dir", folder.path])
            try await serve.expect("listening on ws://")
            try await serve.expect("tokens  POST /v1/tokens is off (no --admin-key)")
            try await serve.expect("push    off: no APNs key (--apns-key), no FCM account (--fcm-service-account)")
            serve.interrupt()
            #expect(try await serve.finish() == 0)
            try await serve.outputRead()
            #expect(serve.printedLines(containing: "/v1/tokens (") == 0)
        }
    }

    @Test func answeringBusyWithoutTheLedgerIsRefused() async throws {
        let serve = try CLIProcess(["serve", "--port", "0", "--answer-busy", "--ledger", "0"])
        try await serve.expect("--answer-busy: the server answers busy from the call ledger: leave --ledger on")
        #expect(try await serve.finish() != 0)
        try await serve.outputRead()
        #expect(serve.printedLines(containing: "listening on") == 0)
    }
}
