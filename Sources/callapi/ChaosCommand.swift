import ArgumentParser
import CallAPITesting
import Foundation

struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Runs seeded fault-injection scenarios against CallAPI endpoints and checks that no call gets stuck.",
        discussion: """
            Each scenario drives 3 endpoints through random actions over a network that drops, duplicates,
            reorders and delays messages, partitions and heals, and crashes and restarts endpoints, on a
            virtual clock; then lets it settle and checks the invariants. A failing scenario prints its seed
            and trace; `--scenarios 1 --seed S` replays it. With `--devices N`, each user is logged in on 1 to N
            devices (from the seed), which all ring; see docs/multi-device.md.
            """)

    @Option(help: "How many scenarios.") var scenarios = 1_000
    @Option(help: "Seed of the first scenario; scenario i uses seed + i.") var seed: UInt64 = 1
    @Option(help: "Probability of losing a message.") var loss = 0.2
    @Option(help: "Probability of duplicating a message.") var dup = 0.1
    @Option(help: "Probability of reordering a message.") var reorder = 0.2
    @Option(help: "Endpoints per scenario (2 or more).") var endpoints = 3
    @Option(help: "Legacy endpoints per scenario (deployed iOS and Web clients' behaviour, in turn).") var legacy = 0
    @Option(help: "Most devices per user (1 to 3); each user gets 1 to this many.") var devices = 1
    @Option(help: "Parallel workers (default: the number of cores).") var workers = ProcessInfo.processInfo
        .activeProcessorCount
    @Flag(help: "Print every failing scenario's trace (default: the first).") var allTraces = false

    func validate() throws {
        guard scenarios > 0 else { throw ValidationError("--scenarios must be positive") }
        for (name, p) in [("loss", loss), ("dup", dup), ("reorder", reorder)] where !(0...1).contains(p) {
            throw ValidationError("--\(name) must be between 0 and 1")
        }
        guard endpoints >= 2 else { throw ValidationError("--endpoints must be at least 2") }
        guard legacy >= 0 else { throw ValidationError("--legacy must not be negative") }
        guard (1...3).contains(devices) else { throw ValidationError("--devices must be 1, 2 or 3") }
    }

    func run() async throws {
        var configuration = ChaosConfiguration()
        configuration.loss = loss
        configuration.duplication = dup
        configuration.reorder = reorder
        configuration.endpoints = endpoints
        configuration.legacyEndpoints = legacy
        configuration.maxDevicesPerUser = devices
        let runner = ChaosRunner(configuration: configuration)
        let start = Date()
        let (count, seed, workers) = (scenarios, self.seed, max(1, workers))
        // Each worker returns its failing scenarios and the calls its scenarios connected (the figure a change of
        // course is compared by).
        let (failures, connected) = await withTaskGroup(of: ([ChaosOutcome], Int).self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var failing: [ChaosOutcome] = []
                    var connected = 0
                    for index in stride(from: worker, to: count, by: workers) {
                        let outcome = runner.run(seed: seed &+ UInt64(index))
                        connected += outcome.callsConnected
                        if !outcome.violations.isEmpty { failing.append(outcome) }
                    }
                    return (failing, connected)
                }
            }
            let all = await group.reduce(into: ([ChaosOutcome](), 0)) {
                $0.0 += $1.0
                $0.1 += $1.1
            }
            return (all.0.sorted { $0.seed < $1.seed }, all.1)
        }
        let elapsed = Date().timeIntervalSince(start)
        for failure in allTraces ? failures : Array(failures.prefix(1)) { print(failure.report, "\n") }
        let violations = failures.map(\.violations.count).reduce(0, +)
        if !failures.isEmpty { print("failing seeds: \(failures.map { String($0.seed) }.joined(separator: " "))") }
        print(
            "\(count) scenarios, \(violations) violations, \(connected) calls connected "
                + "(\(String(format: "%.1f", elapsed)) s, \(Int(Double(count) / max(elapsed, 0.001))) scenarios/s)")
        if violations > 0 { throw ExitCode(1) }
    }
}
