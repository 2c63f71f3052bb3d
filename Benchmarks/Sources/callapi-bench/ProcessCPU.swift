import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time a process has used, user and system, read from `/proc/PID/stat` (Linux; nil elsewhere or when the
/// process is gone). The bench reads its own and, given `--server-pid`, the server's around each step: on a
/// machine whose cores the bench's clients share with the server, the CPU each side spends per message is what
/// bounds the saturation point.
struct ProcessCPU: Codable, Sendable, Equatable {
    var userSeconds: Double
    var systemSeconds: Double

    var totalSeconds: Double { userSeconds + systemSeconds }

    /// The time used by `pid` ("self" for this process) so far.
    static func read(_ pid: String) -> ProcessCPU? {
        #if os(Linux)
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
            return parse(stat, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))))
        #else
            return nil
        #endif
    }

    /// Fields 14 and 15 (utime, stime, in clock ticks) of a `/proc/PID/stat` line. The command name (field 2) is
    /// in parentheses and may hold spaces, so fields are counted after its closing parenthesis.
    static func parse(_ stat: String, ticksPerSecond: Double) -> ProcessCPU? {
        guard ticksPerSecond > 0, let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so utime (14) and stime (15) are the 12th and 13th.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return ProcessCPU(userSeconds: user / ticksPerSecond, systemSeconds: system / ticksPerSecond)
    }

    /// The time used between `earlier` and this reading.
    func since(_ earlier: ProcessCPU) -> ProcessCPU {
        ProcessCPU(userSeconds: userSeconds - earlier.userSeconds, systemSeconds: systemSeconds - earlier.systemSeconds)
    }
}
