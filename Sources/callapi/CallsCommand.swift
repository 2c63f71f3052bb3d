import ArgumentParser
import AsyncHTTPClient
import CallAPIServerCore
import CallAPISignalProtocol
import Foundation
import NIOCore

struct CallsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calls",
        abstract: "Read a running server's call ledger: a user's calls (the default), or one call's time line.",
        subcommands: [CallsListCommand.self, CallTimelineCommand.self], defaultSubcommand: CallsListCommand.self)
}

/// The server and admin key every `callapi calls` command needs.
struct LedgerServerOptions: ParsableArguments {
    @Option(help: "The server, e.g. http://127.0.0.1:8080 (ws:// and wss:// are read as http:// and https://).")
    var server: String
    @Option(name: .customLong("admin-key"), help: "The server's admin key.") var adminKey: String

    /// The server's HTTP base, without a trailing slash.
    var base: String {
        var base = server
        if base.hasPrefix("ws://") { base = "http://" + base.dropFirst(5) }
        if base.hasPrefix("wss://") { base = "https://" + base.dropFirst(6) }
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// GETs `path` with the admin key; the body, or a ``ServerRefusal``.
    func get(_ path: String) async throws -> Data {
        var request = HTTPClientRequest(url: base + path)
        request.headers.add(name: "Authorization", value: "Bearer \(adminKey)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let data = Data((try await response.body.collect(upTo: 16 << 20)).readableBytesView)
        guard response.status == .ok else {
            throw ServerRefusal(status: Int(response.status.code), body: String(decoding: data, as: UTF8.self))
        }
        return data
    }
}

struct CallsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print a user's call history from a running server's call ledger (GET /v1/users/{id}/calls).",
        discussion: """
            Newest first, one call per line: start time, audio/video, caller -> callee, outcome, duration, and who \
            ended it and why. Follows the server's pages until --limit calls are printed.
            """)

    @OptionGroup var ledger: LedgerServerOptions
    @Option(help: "The user id.") var user: String
    @Flag(help: "Only the calls the user missed as callee (missed, cancelled while ringing, busy).") var missed = false
    @Option(
        help: "Only these outcomes, comma-separated (completed, missed, rejected, busy, cancelled, failed, dropped).")
    var outcome: String?
    @Option(help: "At most this many calls (default 50).") var limit: Int = 50

    func validate() throws {
        guard limit > 0 && limit <= 10_000 else { throw ValidationError("--limit must be 1 to 10000") }
    }

    private struct Page: Decodable {
        var calls: [CallRecord]
        var nextCursor: String?
    }

    func run() async throws {
        var printed = 0
        var cursor: String?
        repeat {
            var parameters = ["limit=\(min(200, limit - printed))"]
            if missed { parameters += ["outcome=missed,cancelled,busy", "role=callee"] }
            if let outcome, !missed { parameters.append("outcome=\(Self.encoded(outcome))") }
            if let cursor { parameters.append("cursor=\(Self.encoded(cursor))") }
            let data = try await ledger.get(
                "/v1/users/\(Self.encoded(user))/calls?" + parameters.joined(separator: "&"))
            let page = try JSONDecoder().decode(Page.self, from: data)
            for record in page.calls { print(CallRecordText.line(record)) }
            printed += page.calls.count
            cursor = page.nextCursor
        } while cursor != nil && printed < limit
        if printed == 0 { print("no calls") }
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~,")))
            ?? text
    }
}

struct CallTimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print one call's time line: the ledger's record and each device's report on the server's clock.",
        discussion: """
            GET /v1/calls/{callId}/timeline (docs/timeline.md). One line per mark, from the call's start: the \
            server's own (exact) and each device's, moved by that device's clock offset and shown with its error \
            bar; then each device's stage latencies.
            """)

    @OptionGroup var ledger: LedgerServerOptions
    @Argument(help: "The call id.") var callId: String

    func run() async throws {
        let data = try await ledger.get("/v1/calls/\(CallsListCommand.encoded(callId))/timeline")
        let timeline = try JSONDecoder().decode(CallTimeline.self, from: data)
        for line in CallTimelineText.lines(timeline) { print(line) }
    }
}
