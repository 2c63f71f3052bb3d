import Foundation
import Testing

/// `callapi-allocs` restarts itself under the malloc interposer and reports allocations per full call.
@Suite("callapi-allocs")
struct AllocationCountTests {
    static let executable: String? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("callapi-allocs").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    /// A sanitizer build replaces malloc itself, so nothing reaches the interposer.
    static let underSanitizer = dlsym(nil, "__tsan_init") != nil || dlsym(nil, "__asan_init") != nil

    @Test(
        .enabled(if: executable != nil, "needs the built callapi-allocs"),
        .disabled(if: underSanitizer, "a sanitizer's allocator takes malloc from the interposer"))
    func countsAllocationsOfFullCalls() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.executable))
        process.arguments = ["--calls", "200"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let line = try #require(
            String(decoding: data, as: UTF8.self).split(separator: "\n").last { $0.hasPrefix("{\"bench\"") })
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(report["calls"] as? Int == 200)
        #expect(report["failed"] as? Int == 0)
        // Counted, so more than nothing: a full call encodes and parses a dozen messages.
        #expect((report["mallocsPerCall"] as? Double ?? 0) > 10)
    }
}
