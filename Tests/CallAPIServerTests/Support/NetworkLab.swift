import Foundation

/// Three network namespaces on this machine, made and removed by a test: two phones' (`a`, `b`), each linked by a
/// veth pair to a third (`t`) where the servers run, addressed from the benchmarking range 198.18.0.0/15. `t` does not
/// forward, so `a` and `b` reach every address of `t` (their default route) but not each other: media between them can
/// only go through a relay in `t`. ``setForwarding(_:)`` turns `t` into a router, for a direct path over the same
/// links. Nothing leaves the machine. Needs root and `ip`.
struct NetworkLab: Sendable {
    static let ipCommand = "/usr/sbin/ip"
    /// Namespace names carry the test process's id, so that a lab left behind by a killed run is recognised.
    static let prefix = "callapi-lab-"

    let a: String
    let b: String
    let t: String
    /// `t`'s address on `a`'s link (`a`'s gateway).
    let tAddressForA = "198.18.1.1"
    /// `t`'s address on `b`'s link.
    let tAddressForB = "198.18.2.1"
    let aAddress = "198.18.1.2"
    let bAddress = "198.18.2.2"

    /// Whether labs can be made here: root, `ip`, and namespaces allowed.
    static var isAvailable: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: ipCommand)
    }

    /// A failed `ip` command.
    struct CommandFailed: Error, CustomStringConvertible {
        var command: [String]
        var status: Int32
        var output: String
        var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
    }

    /// Makes the three namespaces and their links. Removes labs of test processes that are gone first.
    static func make(_ name: String) throws -> NetworkLab {
        removeAbandonedLabs()
        let base = "\(prefix)\(getpid())-\(name)"
        let lab = NetworkLab(a: base + "-a", b: base + "-b", t: base + "-t")
        do {
            try lab.build()
        } catch {
            lab.remove()
            throw error
        }
        return lab
    }

    private func build() throws {
        for namespace in [a, b, t] {
            try Self.ip(["netns", "add", namespace])
            try Self.ip(["-n", namespace, "link", "set", "lo", "up"])
        }
        for (phone, phoneAddress, tAddress, link) in [
            (a, aAddress, tAddressForA, "a"), (b, bAddress, tAddressForB, "b"),
        ] {
            // Both ends made inside the namespaces: the root namespace is never touched.
            try Self.ip([
                "-n", t, "link", "add", "t\(link)", "type", "veth", "peer", "name", "p\(link)", "netns", phone,
            ])
            try Self.ip(["-n", t, "addr", "add", "\(tAddress)/24", "dev", "t\(link)"])
            try Self.ip(["-n", phone, "addr", "add", "\(phoneAddress)/24", "dev", "p\(link)"])
            try Self.ip(["-n", t, "link", "set", "t\(link)", "up"])
            try Self.ip(["-n", phone, "link", "set", "p\(link)", "up"])
            try Self.ip(["-n", phone, "route", "add", "default", "via", tAddress])
        }
        try setForwarding(false)
    }

    /// Whether `t` routes between `a` and `b` (off: they cannot reach each other).
    func setForwarding(_ on: Bool) throws {
        try Self.run(Self.ipCommand, ["netns", "exec", t, "sysctl", "-qw", "net.ipv4.ip_forward=\(on ? 1 : 0)"])
    }

    /// Kills every process still inside the namespaces (a test that failed midway leaves its servers and phones
    /// there; coturn does not even stop on SIGTERM), then removes the namespaces, and their links with them. Never
    /// throws: called from `defer`.
    func remove() {
        for namespace in [a, b, t] {
            let pids = (try? Self.run(Self.ipCommand, ["netns", "pids", namespace])) ?? ""
            for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
            try? Self.ip(["netns", "delete", namespace])
        }
    }

    /// Adds or removes a route in `namespace` (the network-change test's broken path).
    func route(_ verb: String, _ arguments: [String], in namespace: String) throws {
        try Self.ip(["-n", namespace, "route", verb] + arguments)
    }

    /// Whether a TCP connection from `namespace` to `address` gets an answer (accepted or refused: either way the
    /// packets got there and back), within a second. python3, since these machines have no ping.
    func reaches(_ address: String, from namespace: String) throws -> Bool {
        let probe = """
            import socket, sys
            s = socket.socket()
            s.settimeout(1)
            try:
                s.connect((sys.argv[1], 9)); print("answered")
            except ConnectionRefusedError:
                print("answered")
            except OSError as error:
                print("no answer:", error)
            """
        let output = try Self.run(Self.ipCommand, ["netns", "exec", namespace, "python3", "-c", probe, address])
        return output.hasPrefix("answered")
    }

    /// Namespaces of labs whose test process is no longer running.
    private static func removeAbandonedLabs() {
        guard let list = try? run(ipCommand, ["netns", "list"]) else { return }
        for line in list.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count).prefix { $0.isNumber }),
                pid != getpid(), kill(pid, 0) != 0
            else { continue }
            try? ip(["netns", "delete", name])
        }
    }

    private static func ip(_ arguments: [String]) throws {
        try run(ipCommand, arguments)
    }

    /// Runs `program` to its end; its output, or ``CommandFailed``.
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw CommandFailed(command: [program] + arguments, status: process.terminationStatus, output: text)
        }
        return text
    }
}
