import Testing

@testable import CallAPI

/// The heap behind ``SystemCallClock``'s timers, against a plain list driven the same way.
@Suite("Timer heap")
struct TimerHeapTests {
    @Test("Random insertions, removals and takes leave what a sorted list holds, earliest first")
    func matchesSortedList() {
        var generator = SplitMix(seed: 7)
        var heap = TimerHeap<Int>()
        // The model: (deadline, insertion number, value) kept in insertion order.
        var model: [(deadline: UInt64, order: Int, value: Int, key: TimerHeap<Int>.Key)] = []
        var now: UInt64 = 0
        for step in 0..<5_000 {
            switch generator.next() % 10 {
            case 0..<5:
                let deadline = now + generator.next() % 50
                let key = heap.insert(step, deadline: deadline)
                model.append((deadline, step, step, key))
            case 5..<8:
                guard !model.isEmpty else { continue }
                let index = Int(generator.next() % UInt64(model.count))
                let removed = model.remove(at: index)
                #expect(heap.remove(removed.key) == removed.value)
                #expect(heap.remove(removed.key) == nil)
            default:
                now += generator.next() % 20
                let due = model.filter { $0.deadline <= now }
                    .sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
                model.removeAll { $0.deadline <= now }
                #expect(heap.takeDue(now: now) == due.map(\.value))
            }
            #expect(heap.count == model.count)
            #expect(heap.earliestDeadline == model.map(\.deadline).min())
        }
    }

    @Test("Equal deadlines are taken in the order they were inserted")
    func equalDeadlinesInOrder() {
        var heap = TimerHeap<String>()
        for name in ["a", "b", "c", "d"] { _ = heap.insert(name, deadline: 10) }
        _ = heap.insert("early", deadline: 5)
        #expect(heap.takeDue(now: 9) == ["early"])
        #expect(heap.takeDue(now: 10) == ["a", "b", "c", "d"])
        #expect(heap.earliestDeadline == nil)
    }

    @Test("A key taken as due or removed no longer removes anything")
    func spentKeys() {
        var heap = TimerHeap<Int>()
        let first = heap.insert(1, deadline: 1)
        let second = heap.insert(2, deadline: 2)
        #expect(heap.takeDue(now: 1) == [1])
        #expect(heap.remove(first) == nil)
        #expect(heap.remove(second) == 2)
        #expect(heap.count == 0)
    }

    @Test("A spent key does not remove the later entry that reuses its place")
    func spentKeyLeavesLaterEntry() {
        var heap = TimerHeap<Int>()
        let spent = heap.insert(1, deadline: 1)
        #expect(heap.remove(spent) == 1)
        let later = heap.insert(2, deadline: 2)
        #expect(heap.remove(spent) == nil)
        #expect(heap.count == 1)
        #expect(heap.remove(later) == 2)
        #expect(heap.remove(later) == nil)
    }
}

/// A small deterministic generator, so that a failure repeats.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
