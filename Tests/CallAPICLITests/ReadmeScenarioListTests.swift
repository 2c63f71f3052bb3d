import Foundation
import Testing

@testable import callapi

/// The README's `callapi demo` line lists every scenario the demo has (besides the default, video).
@Suite struct ReadmeScenarioListTests {
    @Test func theReadmeListsEveryDemoScenario() throws {
        let readme = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../README.md").standardized,
            encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.contains("swift run callapi demo ") })
        let listed = try #require(line.range(of: "--scenario ")).upperBound
        let scenarios = Set(line[listed...].prefix { !$0.isWhitespace }.split(separator: "|").map(String.init))
        let expected = Set(DemoScenario.allCases.map(\.rawValue)).subtracting(["video"])
        #expect(scenarios == expected)
    }
}
