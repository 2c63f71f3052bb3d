import CallAPI
import CallAPITesting
import Foundation
import Testing

@Suite("README integration guide")
struct ReadmeGuideTests {
    private static let guideFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("IntegrationGuide.swift")
    private static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../README.md").standardized

    private static func section(of text: String, from begin: String, to end: String) -> String? {
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex)
        else { return nil }
        return text[start.upperBound..<stop.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func readmeShowsExactlyTheCompiledGuideCode() throws {
        let source = try String(contentsOf: Self.guideFile, encoding: .utf8)
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        let compiled = try #require(Self.section(of: source, from: "// README-GUIDE-BEGIN", to: "// README-GUIDE-END"))
        let shown = try #require(
            Self.section(of: readme, from: "<!-- guide:begin -->\n```swift", to: "```\n<!-- guide:end -->"))
        #expect(shown == compiled)
    }

    @Test func readmeShowsExactlyTheCompiledTestingSnippet() throws {
        let source = try String(
            contentsOf: Self.guideFile.deletingLastPathComponent().appendingPathComponent("TestingGuide.swift"),
            encoding: .utf8)
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        let compiled = try #require(
            Self.section(of: source, from: "// README-TESTING-BEGIN", to: "// README-TESTING-END"))
        let shown = try #require(
            Self.section(of: readme, from: "<!-- testing:begin -->\n```swift", to: "```\n<!-- testing:end -->"))
        // The README shows the test's body at the left margin.
        let dedented = compiled.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
        #expect(shown == dedented)
    }

    @Test func guideCodePlacesAcceptsAndEndsACall() async throws {
        // The guide's CallConfig uses the system clock, so the doubles do too; with zero latencies they
        // deliver at once and nothing waits.
        let clock = SystemCallClock()
        let network = InMemorySignalNetwork(clock: clock)
        let world = SimulatedRTCWorld(clock: clock)
        let alice = CallScreen(userId: 1, rtcEngine: world.engine(userId: 1), signalClient: network.client(userId: 1))
        let bob = CallScreen(userId: 2, rtcEngine: world.engine(userId: 2), signalClient: network.client(userId: 2))
        try await alice.prepare(localView: TestCanvas(), remoteView: TestCanvas())
        try await bob.prepare(localView: TestCanvas(), remoteView: TestCanvas())

        alice.call(2)
        #expect(alice.api.state == .connected)
        #expect(bob.api.state == .connected)

        alice.hangup(2)
        #expect(alice.api.state == .prepared)
        #expect(bob.api.state == .prepared)
        #expect(world.occupiedChannels.isEmpty)

        await alice.close()
        await bob.close()
        #expect(alice.api.state == .idle)
    }
}
