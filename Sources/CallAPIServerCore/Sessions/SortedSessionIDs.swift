/// Session ids in ascending order, without repeats: what ``HubState`` visits in a fixed order without sorting
/// (every session at a shutdown; the presence subscribers at each login and logout).
package struct SortedSessionIDs: Sendable, Equatable, Sequence {
    private(set) var ids: [SessionID] = []

    package func makeIterator() -> IndexingIterator<[SessionID]> { ids.makeIterator() }

    /// Adds `id` in its place (ids only grow, so a new session's is usually appended).
    mutating func insert(_ id: SessionID) {
        let index = place(of: id)
        if index == ids.count || ids[index] != id { ids.insert(id, at: index) }
    }

    mutating func remove(_ id: SessionID) {
        let index = place(of: id)
        if index < ids.count, ids[index] == id { ids.remove(at: index) }
    }

    func contains(_ id: SessionID) -> Bool {
        let index = place(of: id)
        return index < ids.count && ids[index] == id
    }

    /// Where `id` is, or belongs: after every smaller id (binary search; at once for an id past the last).
    private func place(of id: SessionID) -> Int {
        if let last = ids.last, last < id { return ids.count }
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
