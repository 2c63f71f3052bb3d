import Testing

@testable import callapi_bench

/// The CPU time read from `/proc/PID/stat`.
@Suite("process CPU")
struct ProcessCPUTests {
    @Test func readsUserAndSystemTicksAfterANameWithSpacesAndParentheses() throws {
        let line = "4242 (my (odd) server) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 3 0 100 0 0"
        let cpu = try #require(ProcessCPU.parse(line, ticksPerSecond: 100))
        #expect(cpu == ProcessCPU(userSeconds: 2.5, systemSeconds: 0.75))
    }

    @Test func refusesATruncatedLine() {
        #expect(ProcessCPU.parse("4242 (server) S 1 4242", ticksPerSecond: 100) == nil)
        #expect(ProcessCPU.parse("no parenthesis here", ticksPerSecond: 100) == nil)
    }

    @Test func thisProcessHasUsedSomeTimeAndTimeOnlyGrows() throws {
        #if os(Linux)
            let first = try #require(ProcessCPU.read("self"))
            var spin = 0
            for index in 0..<20_000_000 { spin &+= index &* 3 }
            #expect(spin != 1)
            let second = try #require(ProcessCPU.read("self"))
            #expect(second.since(first).totalSeconds >= 0)
            #expect(second.totalSeconds > 0)
        #endif
    }
}
