// `callapi-machine-bench [--calls N] [--runs R]`: the state machine bench of `callapi-bench machine` (the same
// `MachineBench`), in a product that needs only the machine's sources, so it builds quickly. Prints one JSON
// line per run, then the best run's.
import CallAPIMachineBench
import Foundation

func argument(_ name: String, default value: Int, in range: ClosedRange<Int>) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: name) else { return value }
    guard index + 1 < CommandLine.arguments.count, let given = Int(CommandLine.arguments[index + 1]),
        range.contains(given)
    else {
        FileHandle.standardError.write(Data("callapi-machine-bench: \(name) takes \(range)\n".utf8))
        exit(2)
    }
    return given
}

let calls = argument("--calls", default: 100_000, in: 1...10_000_000)
let runs = argument("--runs", default: 3, in: 1...100)
// A short warm-up, so caches and the allocator are in their steady state.
_ = MachineBench(settings: .init(calls: min(calls, 1_000))).run()
var reports: [MachineBench.Report] = []
let encoder = JSONEncoder()
encoder.outputFormatting = .sortedKeys
for _ in 0..<runs {
    let report = MachineBench(settings: .init(calls: calls)).run()
    reports.append(report)
    print(String(decoding: try encoder.encode(report), as: UTF8.self))
}
let best = reports.min { $0.nanosPerInput < $1.nanosPerInput }!
print("best of \(runs): \(best.nanosPerInput) ns per input, \(best.microsPerCall) µs per call")
