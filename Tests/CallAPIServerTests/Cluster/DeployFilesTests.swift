import Foundation
import Testing

/// The files of `deploy/` are what the docs say they are: the systemd unit passes systemd's own checks with the built
/// executable in place, with a low exposure score. (`deploy/haproxy.cfg` is run as shipped by ClusterProxyTests.)
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "systemd-analyze is not here"),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct DeployFilesTests {
    /// The unit with the built `callapi` where it would be installed.
    static func installedUnit() throws -> String {
        let unit = try String(
            contentsOf: CLIProcess.packageRoot.appendingPathComponent("deploy/callapi.service"), encoding: .utf8)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-unit-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("callapi.service").path
        try unit.replacingOccurrences(of: "/usr/local/bin/callapi", with: CLIProcess.executable!)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func theSystemdUnitVerifiesAndExposesLittle() async throws {
        let unit = try Self.installedUnit()
        let verify = try await runToEnd("/usr/bin/systemd-analyze", ["verify", unit])
        #expect(verify.status == 0, "\(verify.output)")
        let security = try await runToEnd("/usr/bin/systemd-analyze", ["security", "--offline=true", unit])
        // "→ Overall exposure level for callapi.service: 1.7 OK": 0 is the most locked down, 10 the least.
        let line = security.output.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
        let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        #expect(score != nil && score! <= 2.5, "\(line)")
    }
}
