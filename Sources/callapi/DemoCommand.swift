import ArgumentParser
import CallAPI
import CallAPIServerCore
import Foundation

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Two users in one process place a call over in-memory signaling and simulated media.",
        discussion: "Prints both sides' state changes and events with millisecond offsets, and the cost map.")

    @Option(
        help: ArgumentHelp(
            "video, audio, reject, cancel, timeout, busy (a third user calls), showroom (the callee streams live) or "
                + "match (three users in a real server's match queue)."))
    var scenario: DemoScenario = .video

    @Option(help: "One-way signaling latency in milliseconds.")
    var latency: Int64 = 25

    @Option(help: "none (simulated media) or webrtc (real VP8 and Opus between the two users, in this process).")
    var media: PhoneMedia = .none

    @Option(
        name: .customLong("ice-servers"),
        help: """
            With --media webrtc: STUN and TURN servers for both users, comma-separated (stun:HOST:PORT, \
            turn:HOST:PORT?transport=udp|tcp, turns:HOST:PORT), TURN with credentials minted from --turn-secret-file \
            as callapi serve mints them.
            """)
    var iceServers: String?

    @Option(name: .customLong("turn-secret-file"), help: "The file holding the secret shared with the TURN server.")
    var turnSecretFile: String?

    @Flag(name: .customLong("relay-only"), help: "With --media webrtc: media only through TURN relays.")
    var relayOnly = false

    /// The ICE settings of both users' engines, as `callapi serve` would hand them out.
    func iceSettings() throws -> ICESettings {
        guard let iceServers else {
            if turnSecretFile != nil || relayOnly {
                throw ValidationError("--turn-secret-file and --relay-only need --ice-servers")
            }
            return ICESettings()
        }
        guard media == .webrtc else { throw ValidationError("--ice-servers needs --media webrtc") }
        let secret = try turnSecretFile.map { path in
            do {
                return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            } catch {
                throw ValidationError("--turn-secret-file \(path): cannot read it")
            }
        }
        do {
            return try ICESettings(
                urls: iceServers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) },
                turnSecret: secret)
        } catch {
            throw ValidationError("--ice-servers: \(error.description)")
        }
    }

    func run() async throws {
        if scenario == .match {
            guard media == .none else { throw ValidationError("the match scenario uses simulated media") }
            return try await runMatch()
        }
        var demo = DemoRun(scenario: scenario, clock: SystemCallClock(), pacer: SleepingPacer())
        demo.networkLatencyMillis = latency
        let ice = try iceSettings()
        if media == .webrtc { demo.makeEngine = try PhoneEngineFactory.inProcessWebRTC(ice: ice, relayOnly: relayOnly) }
        print(
            "callapi demo --scenario \(scenario.rawValue): users \(DemoRun.caller) (caller) and \(DemoRun.callee) (callee)"
        )
        if media == .webrtc {
            print(
                "signaling latency \(demo.networkLatencyMillis) ms; media: webrtc (VP8 + Opus test sources, loopback)"
                    + (iceServers.map { "; ICE servers \($0)" } ?? "") + (relayOnly ? ", relay only" : "") + "\n"
            )
        } else {
            print(
                "signaling latency \(demo.networkLatencyMillis) ms; simulated media: join \(demo.timing.joinLatencyMillis) ms, "
                    + "first frame \(demo.timing.firstFrameLatencyMillis) ms at \(demo.timing.frameRate) fps\n")
        }
        let outcome = await demo.run()
        for user in outcome.timelines.keys.sorted() {
            print("── user \(user) " + String(repeating: "─", count: 40))
            for line in outcome.timelines[user] ?? [] {
                print(String(format: "%6lld ms  %@", line.offsetMillis, line.text))
            }
            if let costs = outcome.costMaps[user], !costs.isEmpty {
                print(
                    "  cost map: "
                        + costs.sorted { $0.value < $1.value }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            }
            print("")
        }
        for user in outcome.finalStates.keys.sorted() {
            if let (state, reason) = outcome.finalStates[user] { print("user \(user) ended \(state)(\(reason))") }
        }
        if let failure = outcome.failure {
            throw ValidationError("demo did not complete: \(failure)")
        }
    }

    private func runMatch() async throws {
        print(
            "callapi demo --scenario match: users \(MatchDemoRun.alice), \(MatchDemoRun.bob) and \(MatchDemoRun.carol) "
                + "on a server in this process (loopback sockets); simulated media")
        for user in [MatchDemoRun.alice, MatchDemoRun.bob, MatchDemoRun.carol] {
            print(
                "  user \(user) enters the match queue with: \((MatchDemoRun.tags[user] ?? []).joined(separator: ", "))"
            )
        }
        print("")
        let outcome = await MatchDemoRun().run()
        print(MatchDemoText.render(outcome))
        if let failure = outcome.failure {
            throw ValidationError("demo did not complete: \(failure)")
        }
    }
}

extension DemoScenario: ExpressibleByArgument {}
