struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `operation`, failing with ``TimedOut`` if it takes longer than `seconds`.
func withTimeout<T: Sendable>(
    _ seconds: Double, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

extension AsyncStream where Element: Sendable {
    /// The first element matching `predicate`, within `seconds`.
    func first(within seconds: Double, _ what: String, where predicate: @escaping @Sendable (Element) -> Bool)
        async throws -> Element
    {
        let stream = self
        return try await withTimeout(seconds, what) {
            for await element in stream where predicate(element) { return element }
            throw TimedOut(what: what + " (the stream ended)")
        }
    }
}
