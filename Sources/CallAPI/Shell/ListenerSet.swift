/// The API's listeners, held weakly, in the order they were added.
struct ListenerSet: Sendable {
    private struct Entry: Sendable {
        weak var listener: (any CallApiListenerProtocol)?
    }

    private var entries: [Entry] = []

    mutating func add(_ listener: any CallApiListenerProtocol) {
        entries.removeAll { $0.listener == nil || $0.listener === listener }
        entries.append(Entry(listener: listener))
    }

    mutating func remove(_ listener: any CallApiListenerProtocol) {
        entries.removeAll { $0.listener == nil || $0.listener === listener }
    }

    var alive: [any CallApiListenerProtocol] { entries.compactMap(\.listener) }
}
