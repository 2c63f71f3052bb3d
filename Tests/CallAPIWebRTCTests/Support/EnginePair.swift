import CallAPI
import Foundation

@testable import CallAPIWebRTC

/// Two engines on one in-process hub, each with an event recorder.
struct EnginePair {
    let hub = InProcessChannelHub()
    let a: WebRTCEngine
    let b: WebRTCEngine
    let eventsA: EventRecorder
    let eventsB: EventRecorder

    init(sources: WebRTCMediaSources = WebRTCMediaSources()) {
        a = WebRTCEngine(transport: hub, sources: sources, label: "a")
        b = WebRTCEngine(transport: hub, sources: sources, label: "b")
        eventsA = EventRecorder(a)
        eventsB = EventRecorder(b)
    }

    /// Both leave and the test waits until each reported it.
    func leave(_ channel: String) async throws {
        a.leaveChannel()
        b.leaveChannel()
        try await eventsA.wait(for: .localLeft(channel: channel))
        try await eventsB.wait(for: .localLeft(channel: channel))
    }
}

/// What the process holds, from /proc.
enum ProcessResources {
    static var openFileDescriptors: Int { entries(of: "/proc/self/fd") }
    static var threads: Int { entries(of: "/proc/self/task") }

    /// fd number → what it points to.
    static var fileDescriptorTargets: [String: String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var targets: [String: String] = [:]
        for fd in fds {
            targets[fd] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "?"
        }
        return targets
    }

    /// The names of the process's threads.
    static var threadNames: [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }.sorted()
    }

    private static func entries(of directory: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? -1
    }
}
