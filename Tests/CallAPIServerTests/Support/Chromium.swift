import Foundation
import NIOConcurrencyHelpers

/// Debian's Chromium, headless, inside a network namespace, driven over the DevTools protocol through a pipe
/// (`--remote-debugging-pipe`: commands on its fd 3, replies and events on its fd 4, each message a JSON text ended
/// by a NUL). A pipe needs no port, so the browser can live in a namespace the test process cannot reach, and no
/// driver is downloaded. Fake camera and microphone from the files given (`--use-file-for-fake-*-capture`).
final class Chromium: Sendable {
    /// `CALLAPI_TEST_CHROMIUM` (scripts/services/install-chromium.sh prints it), else Debian's binary if present.
    static let executable: String? = {
        let candidates = [ProcessInfo.processInfo.environment["CALLAPI_TEST_CHROMIUM"], "/usr/lib/chromium/chromium"]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// A DevTools command the browser refused, or a script that threw.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let pid: pid_t
    private let commands: Int32
    private let replies: Int32
    let folder: URL
    private let nextId = NIOLockedValueBox(0)
    private let waiting = NIOLockedValueBox<[Int: CheckedContinuation<Data, any Error>]>([:])
    /// Console lines and uncaught exceptions of every page, for failure messages.
    private let console = NIOLockedValueBox<[String]>([])

    /// Starts Chromium in `namespace` with fake media from `video` (y4m) and `audio` (wav); `secureOrigins` are
    /// http origins the browser treats as secure (a camera needs a secure page).
    init(namespace: String, video: URL, audio: URL, secureOrigins: [String]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let arguments = [
            NetworkLab.ipCommand, "netns", "exec", namespace, Self.executable!, "--headless=new", "--no-sandbox",
            "--remote-debugging-pipe", "--user-data-dir=\(folder.appendingPathComponent("profile").path)",
            "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
            "--use-file-for-fake-video-capture=\(video.path)", "--use-file-for-fake-audio-capture=\(audio.path)",
            "--autoplay-policy=no-user-gesture-required", "--disable-features=WebRtcHideLocalIpsWithMdns",
            "--unsafely-treat-insecure-origin-as-secure=\(secureOrigins.joined(separator: ","))",
            "--window-size=1200,1000", "--no-first-run", "--disable-gpu", "about:blank",
        ]
        // Our ends close on exec; the browser's are moved to 3 and 4 (from high numbers, so no move overwrites).
        var toBrowser: [Int32] = [0, 0]
        var fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else {
            throw Failure(description: "pipe failed: errno \(errno)")
        }
        for end in [toBrowser[1], fromBrowser[0]] { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let browserReads = fcntl(toBrowser[0], F_DUPFD_CLOEXEC, 100)
        let browserWrites = fcntl(fromBrowser[1], F_DUPFD_CLOEXEC, 100)
        close(toBrowser[0])
        close(fromBrowser[1])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, browserReads, 3)
        posix_spawn_file_actions_adddup2(&actions, browserWrites, 4)
        let log = folder.appendingPathComponent("chromium.log").path
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // crashpad writes under XDG_CONFIG_HOME: keep it in the throwaway folder.
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = folder.path
        environment["HOME"] = folder.path
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        close(browserReads)
        close(browserWrites)
        guard status == 0 else { throw Failure(description: "posix_spawn failed: \(status)") }
        self.pid = pid
        commands = toBrowser[1]
        replies = fromBrowser[0]
        let thread = Thread { [self] in readReplies() }
        thread.start()
    }

    /// Everything the pages printed to their consoles, and their uncaught exceptions.
    var consoleLines: [String] { console.withLockedValue { $0 } }

    /// The browser's own log (stderr), for failure messages.
    var log: String {
        (try? String(contentsOf: folder.appendingPathComponent("chromium.log"), encoding: .utf8)) ?? ""
    }

    /// Sends one command (to a page when `session` is given) and returns its `result` as JSON.
    func send(_ method: String, _ parameters: [String: Any] = [:], session: String? = nil) async throws -> Data {
        let id = nextId.withLockedValue {
            $0 += 1
            return $0
        }
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        var bytes = try JSONSerialization.data(withJSONObject: message)
        bytes.append(0)
        return try await withCheckedThrowingContinuation { continuation in
            waiting.withLockedValue { $0[id] = continuation }
            let written = bytes.withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            if written != bytes.count {
                waiting.withLockedValue { $0.removeValue(forKey: id) }?
                    .resume(throwing: Failure(description: "the browser's pipe is closed"))
            }
        }
    }

    /// Opens a page at `url`.
    func open(_ url: String) async throws -> Page {
        let target = try object(await send("Target.createTarget", ["url": "about:blank"]))["targetId"] as? String
        let attached = try object(await send("Target.attachToTarget", ["targetId": target ?? "", "flatten": true]))
        guard let session = attached["sessionId"] as? String else { throw Failure(description: "no page session") }
        let page = Page(browser: self, session: session)
        _ = try await send("Runtime.enable", session: session)
        _ = try await send("Page.enable", session: session)
        _ = try await send("Page.navigate", ["url": url], session: session)
        return page
    }

    /// Stops the browser and removes its folder.
    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(commands)
        try? FileManager.default.removeItem(at: folder)
    }

    private func readReplies() {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(replies, &chunk, chunk.count)
            if count <= 0 { break }
            buffer.append(contentsOf: chunk[0..<count])
            while let end = buffer.firstIndex(of: 0) {
                let message = buffer[buffer.startIndex..<end]
                buffer.removeSubrange(buffer.startIndex...end)
                handle(Data(message))
            }
        }
        close(replies)
        let failure = Failure(description: "the browser exited; its log:\n\(log.suffix(4000))")
        for continuation in waiting.withLockedValue({ waiting in
            defer { waiting = [:] }; return waiting.values
        }) {
            continuation.resume(throwing: failure)
        }
    }

    private func handle(_ message: Data) {
        guard let json = try? JSONSerialization.jsonObject(with: message) as? [String: Any] else { return }
        if let id = json["id"] as? Int {
            guard let continuation = waiting.withLockedValue({ $0.removeValue(forKey: id) }) else { return }
            if let error = json["error"] as? [String: Any] {
                continuation.resume(throwing: Failure(description: "DevTools refused: \(error)"))
            } else {
                let result = json["result"] ?? [:]
                continuation.resume(
                    returning: (try? JSONSerialization.data(withJSONObject: result)) ?? Data("{}".utf8))
            }
            return
        }
        let parameters = json["params"] as? [String: Any] ?? [:]
        switch json["method"] as? String {
        case "Runtime.consoleAPICalled":
            let text = (parameters["args"] as? [[String: Any]] ?? []).map {
                "\($0["value"] ?? $0["description"] ?? "")"
            }
            console.withLockedValue { $0.append("console: " + text.joined(separator: " ")) }
        case "Runtime.exceptionThrown":
            let details = parameters["exceptionDetails"] as? [String: Any] ?? [:]
            let exception = (details["exception"] as? [String: Any])?["description"] ?? details["text"] ?? ""
            console.withLockedValue { $0.append("exception: \(exception)") }
        default:
            break
        }
    }

    func object(_ data: Data) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: "not an object: \(String(decoding: data, as: UTF8.self))")
        }
        return object
    }

    /// One tab.
    struct Page: Sendable {
        let browser: Chromium
        let session: String

        /// Runs `expression` in the page (awaiting a promise) and returns its value as JSON text.
        func evaluate(_ expression: String) async throws -> String {
            let result = try browser.object(
                await browser.send(
                    "Runtime.evaluate",
                    [
                        "expression": "Promise.resolve(\(expression)).then(v => JSON.stringify(v ?? null))",
                        "awaitPromise": true, "returnByValue": true,
                    ], session: session))
            if let details = result["exceptionDetails"] as? [String: Any] {
                let exception = (details["exception"] as? [String: Any])?["description"] ?? details["text"] ?? ""
                throw Failure(description: "\(expression) threw: \(exception)")
            }
            return ((result["result"] as? [String: Any])?["value"] as? String) ?? "null"
        }

        /// `evaluate` decoded as `T`.
        func value<T: Decodable>(_ expression: String, as type: T.Type = T.self) async throws -> T {
            try JSONDecoder().decode(T.self, from: Data(try await evaluate(expression).utf8))
        }

        /// Polls `expression` (true when done) every 100 ms for up to `seconds`.
        func waitUntil(_ expression: String, within seconds: Double = 15) async throws {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < deadline {
                if (try? await value(expression, as: Bool.self)) == true { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw Failure(
                description: "\(expression) was not true within \(seconds) s; the pages printed:\n"
                    + browser.consoleLines.suffix(40).joined(separator: "\n"))
        }

        /// The page as a PNG.
        func screenshot() async throws -> Data {
            let result = try browser.object(
                await browser.send(
                    "Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true], session: session))
            guard let base64 = result["data"] as? String, let png = Data(base64Encoded: base64) else {
                throw Failure(description: "no screenshot")
            }
            return png
        }

        func navigate(_ url: String) async throws {
            _ = try await browser.send("Page.navigate", ["url": url], session: session)
        }
    }
}
