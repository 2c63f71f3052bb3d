import ArgumentParser
import CallAPI
import CallAPISignalClient
import CallAPISignalProtocol
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
            While it connects, `quit` (or the end of input) with nothing typed before it ends the phone at once. A call \
            the server asks this phone to place (POST /v1/calls, or the match queue) is placed as if `call` had been \
            typed, with the server's call id: "server: placing call <id> to <callee>". A token for another user than \
            --user is refused.
            With --media webrtc (the default where GStreamer is installed) calls carry real VP8 video and Opus \
            audio peer to peer, through the server's RTC channels, and a call is connected when the first remote \
            frame is decoded. Each call's room is fresh; its token comes from --rtc-token (a token for any \
            channel, which the server must allow) or is minted per call through the server's POST /v1/tokens \
            with --admin-key (without either, with the development server's public admin key, which only \
            `callapi serve` in development mode accepts). With --media none media is simulated and a call is \
            connected when accepted.

            Woken by a push (the "killed phone" of docs/push.md): --push-token registers this phone's device (APNs \
            VoIP, or FCM with --push-platform fcm) with the server. With --sleep-until-push the phone then logs out \
            as an app the OS killed, and waits for the push that `callapi push-mock` delivers to that token \
            (--push-mock, --push-ca-file: the mock's URL and certificate, both printed by the mock). When it comes, \
            the phone prints it, logs in (after --wake-delay seconds), and the held call rings with the same callId; \
            a call withdrawn before then is shown as such. While asleep it takes only `wake` (log in now) and `quit`.
            """)

    @Option(
        help: """
            The signaling server, e.g. ws://127.0.0.1:8080 (the /v1/signal path is added); the nodes of a cluster \
            separated by commas, tried in turn when the connection is lost (media and tokens use the first).
            """) var server: String

    /// The servers of `--server`, in order.
    var servers: [String] { server.split(separator: ",").map { String($0) } }
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
    @Option(
        name: .customLong("ice-server"),
        help: """
            A STUN server (stun:HOST:PORT) for every call, before those the server hands out with each room (with \
            --media webrtc; repeatable). TURN servers and their credentials come from the server (--ice-servers).
            """)
    var iceServers: [String] = []
    @Flag(
        name: .customLong("relay-only"),
        help: "Send media only through TURN relays (ICE transport policy relay; with --media webrtc).")
    var relayOnly = false
    @Option(
        name: .customLong("push-token"),
        help: "Register this phone's device for call pushes with this token (APNs: the device token in hex).")
    var pushToken: String?
    @Option(name: .customLong("push-platform"), help: "apns or fcm: the push service of --push-token.")
    var pushPlatform: String = "apns"
    @Option(name: .customLong("push-topic"), help: "The app's bundle id for APNs (the VoIP topic is <topic>.voip).")
    var pushTopic: String = "dev.callapi.phone"
    @Flag(
        name: .customLong("sleep-until-push"),
        help: "After registering --push-token, log out as a killed app and log in again when a push arrives.")
    var sleepUntilPush = false
    @Option(
        name: .customLong("push-mock"),
        help: "callapi push-mock's URL (https://127.0.0.1:<port>): it delivers the pushes (with --sleep-until-push).")
    var pushMock: String?
    @Option(
        name: .customLong("push-ca-file"), help: "The push mock's certificate (mock-ca.pem in its --dir).")
    var pushCAFile: String?
    @Option(
        name: .customLong("wake-delay"),
        help: "Seconds from the push to logging in: an OS slow to start the app (default 0; `wake` skips it).")
    var wakeDelay: Double = 0

    func validate() throws {
        guard !servers.isEmpty else { throw ValidationError("--server: give at least one server URL") }
        if media == .webrtc {
            if let reason = PhoneMedia.webrtcUnavailableReason {
                throw ValidationError("--media webrtc is not available: \(reason); use --media none")
            }
        } else if snapshot != nil || camera != nil || mediaFile != nil || speaker || !iceServers.isEmpty || relayOnly {
            throw ValidationError(
                "--snapshot, --camera, --media-file, --speaker, --ice-server and --relay-only need --media webrtc")
        }
        for url in iceServers where ICEServer.scheme(of: url) != .stun {
            throw ValidationError(
                "--ice-server \(url): give stun:HOST:PORT (TURN servers and their credentials come from the server)")
        }
        if let mediaFile, !FileManager.default.fileExists(atPath: mediaFile) {
            throw ValidationError("--media-file \(mediaFile): no such file")
        }
        if let pushToken, pushToken.isEmpty || pushToken.count > 512 {
            throw ValidationError("--push-token must have 1-512 characters")
        }
        if PushDevice.Platform(rawValue: pushPlatform) == nil {
            throw ValidationError("--push-platform must be apns or fcm, not \"\(pushPlatform)\"")
        }
        if sleepUntilPush {
            guard pushToken != nil, pushMock != nil, let pushCAFile else {
                throw ValidationError(
                    "--sleep-until-push needs --push-token, --push-mock and --push-ca-file (callapi push-mock prints them)"
                )
            }
            guard FileManager.default.fileExists(atPath: pushCAFile) else {
                throw ValidationError("--push-ca-file \(pushCAFile): no such file")
            }
        } else if pushMock != nil || pushCAFile != nil || wakeDelay != 0 {
            throw ValidationError("--push-mock, --push-ca-file and --wake-delay need --sleep-until-push")
        }
        guard (0...300).contains(wakeDelay) else {
            throw ValidationError("--wake-delay must be 0-300 seconds")
        }
    }

    func run() async throws {
        let output = PhoneOutput(user: user)
        // A constant: tasks below capture it.
        let logger = {
            var logger = Logger(label: "callapi.phone")
            logger.logLevel = .warning
            return logger
        }()
        let (inputStream, feed) = AsyncStream.makeStream(of: PhoneInput.self)
        StandardInputLines.start(feeding: feed)
        var inputs = inputStream.makeAsyncIterator()
        let woken = sleepUntilPush
        if sleepUntilPush {
            guard try await sleepUntilPushed(&inputs, feed: feed, output: output, logger: logger) else {
                output.say("bye")
                return
            }
        }
        var signalConfiguration = SignalClientConfiguration(urls: servers)
        signalConfiguration.messageTTLSeconds = ttl
        // A phone with a push device names it at login: a call then still pushes the user's other devices.
        signalConfiguration.deviceId = pushToken == nil ? nil : pushDeviceId
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
        // Subscribed before login: a woken phone's tombstones come with the login, and a call the server asks this
        // phone to place may come right after it.
        let api = CallApiImpl()
        let events = signal.events()
        let watchEvents = Task {
            for await event in events {
                switch event {
                case .presenceChanged(let userId, let online):
                    output.say("presence: \(userId) is \(online ? "online" : "offline")")
                case .tokenWillExpire(let expiresAt):
                    output.say("signaling: token expires at \(expiresAt) ms; restart with a fresh --token")
                case .callPlaced(let order):
                    // Placed through CallAPI as ServerCallAgent places it, as if `call` had been typed (the phone does
                    // not auto-accept matched calls: its user types accept).
                    output.say(
                        "server: placing call \(order.callId) to \(order.calleeId) (POST /v1/calls or a match)")
                    ServerCallAgent.place(order, with: api, logger: logger)
                case .callWithdrawn(let callId, let reason):
                    let why =
                        switch reason {
                        case .cancelled: "the caller cancelled it"
                        case .expired: "it was not answered in time"
                        case .answeredElsewhere: "another device of this user answered it"
                        case .declinedElsewhere: "another device of this user declined it"
                        }
                    output.say("push: call \(callId) was withdrawn before this phone woke (\(reason.rawValue)): \(why)")
                default:
                    break
                }
            }
        }

        let engine: any CallRTCEngine =
            media == .webrtc
            ? try PhoneEngineFactory.webrtc(
                servers: servers, sources: .init(camera: camera, mediaFile: mediaFile, speaker: speaker),
                ice: .init(stunURLs: iceServers, relayOnly: relayOnly), device: api.deviceId)
            : SimulatedRTCWorld(clock: SystemCallClock()).engine(userId: user)
        let preparation = PhonePreparation(
            user: user, media: media, ringTimeoutMillis: ringTimeout * 1000, snapshotFolder: snapshot,
            tokens: PhoneTokenSource(server: servers[0], user: user, rtcToken: rtcToken, adminKey: adminKey))
        let tracker = CallTracker(me: user)
        let listener = PhoneListener(say: output.say) { [weak api] _, _ in
            // The media side failed (kicked from the room, say): the call cannot go on, so end it.
            guard let api, let peer = tracker.peer, tracker.inCall else { return }
            output.say("call: hanging up (media failed)")
            api.hangup(remoteUserId: peer, reason: "media failed", completion: nil)
        }
        let changes = api.stateChanges
        let watchCalls = Task {
            var wasInCall = false
            for await change in changes {
                tracker.update(change)
                output.say(describe(change))
                if change.state == .connected, let costs = Self.costs(in: change) { output.say(costs) }
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
        // Each call is reported to the server's ledger when it ends, for its time line (`callapi calls show`).
        let reporter = CallReporter(api: api, signal: signal, engine: engine, logger: logger)
        let setUpCalls = {
            api.initialize(
                config: CallConfig(userId: user, rtcEngine: engine, signalClient: signal, clock: SystemCallClock()))
            api.addListener(listener: listener)
            api.addListener(listener: reporter)
            try await api.prepareForCall(prepareConfig: preparation.next())
        }
        // A woken phone is ready for its held call before it logs in (the server delivers it with the login).
        if woken { try await setUpCalls() }
        let login = Task { () -> String? in
            do {
                try await signal.login(token: token)
                return nil
            } catch {
                return "\(error)"
            }
        }
        let reportLogin = Task { feed.yield(.loggedIn(error: await login.value)) }
        var startup = PhoneStartupInput()
        var loginError: String?
        waiting: while true {
            guard let input = await inputs.next() else {
                guard startup.endOfInput() == .keepWaiting else {
                    // A refused login that raced the end of input is still a failure, not a quit.
                    if let refusal = await refusedLogin(signal) {
                        loginError = refusal
                        break waiting
                    }
                    return await quitWhileConnecting(signal, output, watchStates)
                }
                loginError = await login.value
                break waiting
            }
            switch input {
            case .line(let line):
                if startup.line(line) == .quitNow {
                    if let refusal = await refusedLogin(signal) {
                        loginError = refusal
                        break waiting
                    }
                    return await quitWhileConnecting(signal, output, watchStates)
                }
            case .loggedIn(let error):
                loginError = error
                break waiting
            case .pushed, .pushFailed, .wakeNow:
                continue
            }
        }
        reportLogin.cancel()
        if let loginError {
            output.say("error: \(loginError)")
            watchStates.cancel()
            throw ExitCode.failure
        }
        if let other = await otherUser(on: signal) {
            output.say(wrongUser(other))
            await Self.logOut(signal)
            watchStates.cancel()
            throw ExitCode.failure
        }
        let online = try await signal.subscribePresence()
        output.say("online: \(online.joined(separator: ", "))")
        await showMissedCalls(signal: signal, output: output)
        if let pushToken, !sleepUntilPush {
            try await register(pushToken, on: signal, output: output)
        }
        if !woken { try await setUpCalls() }

        var queued = startup.queued[...]
        commands: while true {
            let line: String
            if let next = queued.popFirst() {
                line = next
            } else {
                guard let input = await inputs.next() else { break }
                guard case .line(let typed) = input else { continue }
                line = typed
            }
            let words = line.split(separator: " ").map(String.init)
            guard let command = words.first?.lowercased() else { continue }
            if command == "quit" || command == "exit" { break commands }
            await perform(command, Array(words.dropFirst()), api: api, signal: signal, tracker: tracker, output: output)
        }
        if let peer = tracker.peer, tracker.inCall {
            try? await api.hangup(remoteUserId: peer, reason: "quit")
        }
        await api.deinitialize()
        await Self.logOut(signal)
        api.removeListener(listener: listener)
        api.removeListener(listener: reporter)
        watchCalls.cancel()
        watchEvents.cancel()
        watchStates.cancel()
        output.say("bye")
    }

    /// The user the server logged `signal` in as, when it is not `--user` (the token is someone else's).
    private func otherUser(on signal: SignalClient) async -> String? {
        if case .connected(let userId, _) = await signal.state, userId != String(user) { return userId }
        return nil
    }

    private func wrongUser(_ other: String) -> String {
        "error: the token is for user \(other), not \(user) (--user): mint one with `callapi token --user \(user)` "
            + "(or POST /v1/tokens)"
    }

    /// Why the server refused the login (or it timed out), when the client has stopped for that reason.
    private func refusedLogin(_ signal: SignalClient) async -> String? {
        guard case .stopped(let reason) = await signal.state, reason != .loggedOut else { return nil }
        return "\(reason)"
    }

    /// `quit` (or the end of input) before the phone is logged in: stop trying and say goodbye.
    private func quitWhileConnecting(_ signal: SignalClient, _ output: PhoneOutput, _ watchStates: Task<Void, Never>)
        async
    {
        watchStates.cancel()
        output.say("signaling: not connected; quitting")
        await Self.logOut(signal)
        output.say("bye")
    }

    /// Logs out and gives the goodbye a moment to reach the server before the process exits (at most a second).
    private static func logOut(_ signal: SignalClient) async {
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
    }

    /// The id this phone registers its push device under.
    private var pushDeviceId: String { "phone-\(user)" }

    /// Registers this phone's device for call pushes.
    private func register(_ pushToken: String, on signal: SignalClient, output: PhoneOutput) async throws {
        let platform = PushDevice.Platform(rawValue: pushPlatform) ?? .apns
        let device = PushDevice(
            deviceId: pushDeviceId, platform: platform, kind: .voip, token: pushToken,
            topic: platform == .apns ? pushTopic : nil, environment: platform == .apns ? .sandbox : nil)
        _ = try await signal.registerDevice(device)
        output.say("push: device \(device.deviceId) registered (\(platform.rawValue) voip)")
    }

    /// The phone as an app the OS has killed: logs in to register its device, logs out, and waits for a push to
    /// the device (or `wake`). Returns false when `quit` came first (or the end of input).
    private func sleepUntilPushed(
        _ inputs: inout AsyncStream<PhoneInput>.Iterator, feed: AsyncStream<PhoneInput>.Continuation,
        output: PhoneOutput, logger: Logger
    ) async throws -> Bool {
        guard let pushToken, let pushMock, let pushCAFile else { return false }
        let source = try PushWakeSource(
            mockURL: pushMock, token: pushToken, certificatePEM: try String(contentsOfFile: pushCAFile, encoding: .utf8)
        )
        let seen: Int
        do {
            let signal = SignalClient(configuration: SignalClientConfiguration(urls: servers), logger: logger)
            try await signal.login(token: token)
            if let other = await otherUser(on: signal) {
                output.say(wrongUser(other))
                await Self.logOut(signal)
                throw ExitCode.failure
            }
            try await register(pushToken, on: signal, output: output)
            seen = try await source.deliveredCount()
            await Self.logOut(signal)
        } catch {
            if !(error is ExitCode) { output.say("error: \(error)") }
            await source.shutdown()
            throw ExitCode.failure
        }
        output.say("push: app killed (logged out); asleep until a push to its device (type wake or quit)")
        let waiter = Task {
            do {
                feed.yield(.pushed(try await source.delivery(seen)))
            } catch {
                feed.yield(.pushFailed("\(error)"))
            }
        }
        var wakeTimer: Task<Void, Never>?
        var wake = false
        loop: while let input = await inputs.next() {
            switch input {
            case .line(let line):
                switch line.lowercased() {
                case "wake":
                    output.say("push: woken by hand")
                    wake = true
                    break loop
                case "quit", "exit":
                    break loop
                case "":
                    continue
                default:
                    output.say("asleep: the app is not running; type wake or quit")
                }
            case .pushed(let delivery):
                // As a VoIP push must be: shown whatever it holds, and the app started for it.
                do {
                    let call = try PushWakeSource.call(in: delivery.payload)
                    let left = max(0, call.ringDeadlineMillis - SystemCallClock().nowMillis()) / 1000
                    output.say(
                        "push: call \(call.callId) from \(call.callerId)"
                            + (call.callerName.map { " (\($0))" } ?? "")
                            + ", \(call.video ? "video" : "audio"), rings for \(left) s more")
                } catch {
                    output.say("push: \(error)")
                }
                guard wakeDelay > 0 else {
                    wake = true
                    break loop
                }
                output.say("push: waking in \(wakeDelay) s")
                let delay = wakeDelay
                wakeTimer = Task {
                    try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                    if !Task.isCancelled { feed.yield(.wakeNow) }
                }
            case .wakeNow:
                wake = true
                break loop
            case .pushFailed(let message):
                output.say("push: no push can come: \(message)")
                break loop
            case .loggedIn:
                continue
            }
        }
        waiter.cancel()
        wakeTimer?.cancel()
        await source.shutdown()
        if wake { output.say("push: waking: logging in") }
        return wake
    }

    /// The calls missed in the last week, from the server's call ledger (a server without one says so).
    private func showMissedCalls(signal: SignalClient, output: PhoneOutput) async {
        let weekAgo = SystemCallClock().nowMillis() - 7 * 86_400_000
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
                // The cancel's send was answered: the server has it (a held, pushed call is withdrawn by now).
                output.say("cancel: sent")
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

    /// The connected state's cost map as one line, stages in the order they happened: "costs: acceptCall=812
    /// localUserJoinChannel=840 … recvFirstFrame=1460" (milliseconds from the call's start on this side).
    static func costs(in change: CallStateChange) -> String? {
        guard case .object(let map)? = change.eventInfo[kCostTimeMap], !map.isEmpty else { return nil }
        let stages = map.compactMap { name, value -> (String, Int)? in
            guard case .int(let millis) = value else { return nil }
            return (name, millis)
        }
        return "costs: "
            + stages.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    private func describe(_ change: CallStateChange) -> String {
        var text = "call: \(change.state) (\(change.reason))"
        if let peer = CallTracker.peer(in: change, me: user) { text += " peer \(peer)" }
        if change.state == .calling, case .string(let callId)? = change.eventInfo["callId"] {
            text += " call \(callId)"
        }
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

/// What the phone reacts to: lines typed, and while it sleeps, its push.
enum PhoneInput: Sendable {
    case line(String)
    case pushed(PushWakeSource.Delivery)
    /// No push can come (the mock went away, say).
    case pushFailed(String)
    /// The wake delay after a push is over.
    case wakeNow
    /// The login finished: `error` is nil when it succeeded.
    case loggedIn(error: String?)
}

/// Lines from standard input, read on a thread of their own so no async task blocks on the terminal.
private enum StandardInputLines {
    static func start(feeding feed: AsyncStream<PhoneInput>.Continuation) {
        let thread = Thread {
            while let line = readLine() {
                feed.yield(.line(line.trimmingCharacters(in: .whitespaces)))
            }
            feed.finish()
        }
        thread.start()
    }
}
