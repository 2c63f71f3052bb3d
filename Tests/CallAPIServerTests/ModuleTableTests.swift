import Foundation
import Testing

/// docs/architecture.md is the map: its module table and its list of test targets name exactly the targets of
/// Package.swift, so a module cannot be added, renamed or removed without the map following.
@Suite struct ModuleTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every quoted name in `text` that follows `marker` and `name: "` on the same call.
    static func names(in text: String, after markers: [String]) -> Set<String> {
        var names: Set<String> = []
        for marker in markers {
            var rest = text[...]
            while let start = rest.range(of: marker) {
                rest = rest[start.upperBound...]
                guard let name = rest.range(of: "name: \""), let end = rest[name.upperBound...].firstIndex(of: "\"")
                else { break }
                names.insert(String(rest[name.upperBound..<end]))
            }
        }
        return names
    }

    @Test func theArchitectureMapNamesExactlyThePackagesTargets() throws {
        let manifest = try Self.text("Package.swift")
        let products = Self.names(
            in: manifest, after: [".target(", ".executableTarget(", ".systemLibrary(", ".plugin("])
        let tests = Self.names(in: manifest, after: [".testTarget("])
        #expect(products.contains("CallAPIServer") && tests.contains("CallAPIServerTests"))

        let map = try Self.text("docs/architecture.md")
        let section = try #require(map.range(of: "## Modules")).upperBound
        let end = try #require(map.range(of: "Inside `Sources/CallAPI`", range: section..<map.endIndex)).lowerBound
        let modules = map[section..<end]
        // The first cell of each row of the table, and the names in the test-target sentence.
        var listed: Set<String> = []
        for line in modules.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for part in cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            where part.offset % 2 == 1 && part.element.allSatisfy({ $0.isLetter || $0.isNumber || "_-".contains($0) }) {
                listed.insert(String(part.element))
            }
        }
        var listedTests: Set<String> = []
        if let sentence = modules.range(of: "Test targets:") {
            // The sentence ends at the first full stop that ends a line or precedes a space.
            let after = modules[sentence.upperBound...]
            let stop = after.range(of: ". ")?.lowerBound ?? after.endIndex
            let line = after[..<min(stop, after.range(of: ".\n")?.lowerBound ?? after.endIndex)]
            for part in line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            where part.offset % 2 == 1 {
                let name = String(part.element)
                if name.hasSuffix("Tests") { listedTests.insert(name) }
            }
        }
        #expect(listed == products, "the module table differs from Package.swift's targets")
        #expect(listedTests == tests, "the test targets listed differ from Package.swift's")
    }
}
