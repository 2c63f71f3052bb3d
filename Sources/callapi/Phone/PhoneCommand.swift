import ArgumentParser
import CallAPI
import CallAPISignalClient
import CallAPITesting
import Foundation
import Logging

struct PhoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "A terminal softphone on the signaling server: shows who is online and call states.",
        discussion: """
            Reads commands from stdin, one per line, so it can be scripted:
              call 1002 [audio]   place a video (or audio) call
              accept              accept the ringing call
              reject [reason]     reject the ringing call
              cancel              cancel the call you placed
              hangup              end the call
              users               list who is online
              history [n]         your last n calls from the server's call ledger (default 10)
              wait <seconds>      pause (for scripts)
              quit                hang up, log out and exit (also at end of input)
            With --media webrtc (the default where GStreamer is installed) calls carry real VP8 video and Opus \
            audio peer to peer, through the server's RTC channels, and a call is connected when the first remote \
            frame is decoded. Each call's room is fresh; its token comes from --rtc-token (a token for any \
            channel, which the server must allow) or is minted per call through the server's POST /v1/tokens \
            with --admin-key (without either, with the development server's public admin key, which only \
            `callapi serve` in development mode accepts). With --media none media is simulated and a call is \
            connected when accepted.
            """)

    @Option(help: "The signaling server, e.g. ws://127.0.0.1:8080 (the /v1/signal path is added).") var server: String
    @Option(help: "Your user id (a number, e.g. 1001).") var user: UInt
    @Option(help: "Your login token (callapi token --user ...).") var token: String
    @Option(name: .customLong("ring-timeout"), help: "Seconds a call rings before it times out.") var ringTimeout:
        UInt64 =
            15
    @Option(help: "Seconds the server may hold a message for an offline peer (0: fail at once).") var ttl: Int = 0
    @Option(help: "webrtc (real audio and video) or none (simulated).") var media: PhoneMedia = .preferred
    @Option(
        name: .customLong("rtc-token"), help: "A channel token for any channel (callapi token --rtc --channel '*').")
    var rtcToken: String?
    @Option(
        name: .customLong("admin-key"),
        help: "The server's admin key: mint a token for each call's room through POST /v1/tokens (per-call tokens).")
    var adminKey: String?
    @Option(help: "Save the first remote video frame of each call as a PNG in this folder (with --media webrtc).")
    var snapshot: String?
    @Option(help: "A camera (V4L2 device such as /dev/video0) instead of the test pattern (with --media webrtc).")
    var camera: String?
    @Option(
        name: .customLong("media-file"),
        help: "Send this file's video and audio instead of the test sources (with --media webrtc).")
    var mediaFile: String?
    @Flag(help: "Play remote audio on the default sound device (with --media webrtc; otherwise it is discarded).")
    var speaker = false

    func validate() throws {
        if media == .webrtc {
            if let reason = PhoneMedia.webrtcUnavailableReason {
                throw ValidationError("--media webrtc is not available: \(reason); use --media none")
            }
        } else if snapshot != nil || camera != nil || mediaFile != nil || speaker {
            throw ValidationError("--snapshot, --camera, --media-file and --speaker need --media webrtc")
        }
        if let mediaFile, !FileManager.default.fileExists(atPath: mediaFile) {
            throw ValidationError("--media-file \(mediaFile): no such file")
        }
    }

    func run() async throws {
        let output = PhoneOutput(user: user)
        var logger = Logger(label: "callapi.phone")
        logger.logLevel = .warning
        var signalConfiguration = SignalClientConfiguration(url: server)
        signalConfiguration.messageTTLSeconds = ttl
        let signal = SignalClient(configuration: signalConfiguration, logger: logger)
        output.say(
            media == .webrtc
                ? "media: webrtc (VP8 + Opus, test sources); connected on the first decoded remote frame"
                : "media: simulated; a call is connected when accepted")
        if media == .webrtc && rtcToken == nil && adminKey == nil {
            output.say(
                "media: per-call room tokens from the development server (its public admin key); "
                    + "pass --admin-key or --rtc-token for a production server")
        }
        output.say("signaling: connecting to \(signalConfiguration.url)")

        let states = signal.stateUpdates()
        let watchStates = Task {
            var last = ""
            for await state in states where state.description != last && state != .idle {
                last = state.description
                output.say("signaling: \(state)")
            }
        }
        do {
            try await signal.login(token: token)
        } catch {
            output.say("error: \(error)")
            watchStates.cancel()
            throw ExitCode.failure
        }
        let events = signal.events()
        let watchEvents = Task {
            for await event in events {
                switch event {
                case .presenceChanged(let userId, let online):
                    output.say("presence: \(userId) is \(online ? "online" : "offline")")
                case .tokenWillExpire(let expiresAt):
                    output.say("signaling: token expires at \(expiresAt) ms; restart with a fresh --token")
                default:
                    break
                }
            }
        }
        let online = try await signal.subscribePresence()
        output.say("online: \(online.joined(separator: ", "))")
        await showMissedCalls(signal: signal, output: output)

        let api = CallApiImpl()
        let engine: any CallRTCEngine =
            media == .webrtc
            ? try PhoneEngineFactory.webrtc(
                server: server, sources: .init(camera: camera, mediaFile: mediaFile, speaker: speaker))
            : SimulatedRTCWorld(clock: SystemCallClock()).engine(userId: user)
        api.initialize(
            config: CallConfig(userId: user, rtcEngine: engine, signalClient: signal, clock: SystemCallClock()))
        let preparation = PhonePreparation(
            user: user, media: media, ringTimeoutMillis: ringTimeout * 1000, snapshotFolder: snapshot,
            tokens: PhoneTokenSource(server: server, user: user, rtcToken: rtcToken, adminKey: adminKey))
        let tracker = CallTracker(me: user)
        let listener = PhoneListener(say: output.say) { [weak api] _, _ in
            // The media side failed (kicked from the room, say): the call cannot go on, so end it.
            guard let api, let peer = tracker.peer, tracker.inCall else { return }
            output.say("call: hanging up (media failed)")
            api.hangup(remoteUserId: peer, reason: "media failed", completion: nil)
        }
        api.addListener(listener: listener)
        let changes = api.stateChanges
        let watchCalls = Task {
            var wasInCall = false
            for await change in changes {
                tracker.update(change)
                output.say(describe(change))
                if change.state == .connected, let canvas = preparation.currentSnapshot {
                    Task {
                        let saved = await PhoneEngineFactory.waitUntilSaved(canvas.canvas)
                        output.say(saved ? "snapshot: saved \(canvas.path)" : "snapshot: could not save \(canvas.path)")
                    }
                }
                let inCall = [.calling, .connecting, .connected].contains(change.state)
                if wasInCall && change.state == .prepared {
                    // A fresh snapshot canvas for the next call.
                    try? await api.prepareForCall(prepareConfig: preparation.next())
                }
                wasInCall = inCall
            }
        }
        try await api.prepareForCall(prepareConfig: preparation.next())

        for await line in StandardInputLines.stream() {
            let words = line.split(separator: " ").map(String.init)
            guard let command = words.first?.lowercased() else { continue }
            if command == "quit" || command == "exit" { break }
            await perform(command, Array(words.dropFirst()), api: api, signal: signal, tracker: tracker, output: output)
        }
        if let peer = tracker.peer, tracker.inCall {
            try? await api.hangup(remoteUserId: peer, reason: "quit")
        }
        await api.deinitialize()
        // Log out and give the goodbye a moment to reach the server before the process exits.
        let stopped = signal.stateUpdates()
        signal.logout()
        let flushed = Task {
            for await state in stopped {
                if case .stopped = state { break }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        let deadline = Task {
            try? await Task.sleep(for: .seconds(1))
            flushed.cancel()
        }
        await flushed.value
        deadline.cancel()
        api.removeListener(listener: listener)
        watchCalls.cancel()
        watchEvents.cancel()
        watchStates.cancel()
        output.say("bye")
    }

    /// The calls missed in the last week, from the server's call ledger (a server without one says so).
    private func showMissedCalls(signal: SignalClient, output: PhoneOutput) async {
        let weekAgo = Int64(Date().timeIntervalSince1970 * 1000) - 7 * 86_400_000
        do {
            let page = try await signal.callHistory(missedOnly: true, since: weekAgo, limit: 20)
            output.say(page.calls.isEmpty ? "missed calls: none" : "missed calls: \(page.calls.count) in the last week")
            for record in page.calls { output.say("missed: \(CallRecordText.line(record))") }
        } catch {
            output.say("missed calls: not available (\(error))")
        }
    }

    private func perform(
        _ command: String, _ arguments: [String], api: CallApiImpl, signal: SignalClient, tracker: CallTracker,
        output: PhoneOutput
    ) async {
        do {
            switch command {
            case "call":
                guard let peerText = arguments.first, let peer = UInt(peerText) else {
                    output.say("usage: call <user id> [audio]")
                    return
                }
                let type: CallType = arguments.dropFirst().first?.lowercased() == "audio" ? .audio : .video
                try await api.call(remoteUserId: peer, callType: type)
            case "accept":
                guard let peer = tracker.peer else { return output.say("nothing to accept") }
                try await api.accept(remoteUserId: peer)
            case "reject":
                guard let peer = tracker.peer else { return output.say("nothing to reject") }
                try await api.reject(
                    remoteUserId: peer, reason: arguments.isEmpty ? nil : arguments.joined(separator: " "))
            case "cancel":
                try await api.cancelCall()
            case "hangup":
                guard let peer = tracker.peer else { return output.say("no call to hang up") }
                try await api.hangup(
                    remoteUserId: peer, reason: arguments.isEmpty ? nil : arguments.joined(separator: " "))
            case "users":
                output.say("online: \(try await signal.onlineUsers().joined(separator: ", "))")
            case "history":
                guard let count = Int(arguments.first ?? "10"), (1...200).contains(count) else {
                    return output.say("history takes a number of calls from 1 to 200")
                }
                let page = try await signal.callHistory(limit: count)
                output.say(
                    page.calls.isEmpty ? "history: no calls" : "history: \(page.calls.count) calls, newest first")
                for record in page.calls { output.say("history: \(CallRecordText.line(record))") }
            case "wait":
                guard let seconds = Double(arguments.first ?? "1"), seconds >= 0, seconds <= 86_400 else {
                    return output.say("wait takes a number of seconds from 0 to 86400")
                }
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            case "help":
                output.say(
                    "commands: call <id> [audio], accept, reject [reason], cancel, hangup, users, history [n], wait <s>, "
                        + "quit")
            default:
                output.say("unknown command \"\(command)\" (try help)")
            }
        } catch {
            output.say("error: \(error)")
        }
    }

    private func describe(_ change: CallStateChange) -> String {
        var text = "call: \(change.state) (\(change.reason))"
        if let peer = CallTracker.peer(in: change, me: user) { text += " peer \(peer)" }
        if let reason = change.eventInfo["rejectReason"] ?? change.eventInfo["hangupReason"],
            case .string(let value) = reason, !value.isEmpty
        {
            text += " \"\(value)\""
        }
        return text
    }
}

/// Prints lines tagged with the user, safely from any task.
struct PhoneOutput: Sendable {
    let user: UInt
    func say(_ text: String) {
        FileHandle.standardOutput.write(Data(line(text).utf8))
    }

    /// One line of output: `text` carries peer-supplied strings (reasons, ids, errors), so it is escaped and can
    /// neither hold terminal control sequences nor start a line of its own.
    func line(_ text: String) -> String {
        // Written unbuffered by `say`, so a script reading the output sees each line as it happens.
        "[\(user)] \(TerminalText.escaped(text))\n"
    }
}

/// Remembers the peer of the current call from state changes.
private final class CallTracker: Sendable {
    private let state = Locked<(peer: UInt?, inCall: Bool)>((nil, false))

    var peer: UInt? { state.withLock { $0.peer } }
    var inCall: Bool { state.withLock { $0.inCall } }

    let me: UInt
    init(me: UInt) { self.me = me }

    func update(_ change: CallStateChange) {
        let inCall = [.calling, .connecting, .connected].contains(change.state)
        let peer = Self.peer(in: change, me: me)
        state.withLock { current in
            current.inCall = inCall
            if let peer { current.peer = peer }
        }
    }

    /// The other user of the call: the message's sender or target, whichever is not this user.
    static func peer(in change: CallStateChange, me: UInt) -> UInt? {
        for key in ["fromUserId", "remoteUserId"] {
            let id: UInt? =
                switch change.eventInfo[key] {
                case .int(let number)?: number > 0 ? UInt(number) : nil
                case .string(let text)?: UInt(text)
                default: nil
                }
            if let id, id != me { return id }
        }
        return nil
    }
}

/// Lines from standard input, read on a thread of their own so no async task blocks on the terminal.
private enum StandardInputLines {
    static func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine() {
                continuation.yield(line.trimmingCharacters(in: .whitespaces))
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}
