import CallAPISignalProtocol
import Testing

@Suite struct ArrayTakeEachTests {
    final class Item {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    @Test(arguments: [0, 1, 2, 3, 8])
    func everyElementIsHandedOutOnceInOrderThenReleasedAndTheStorageIsKept(count: Int) {
        var items = (0..<count).map(Item.init)
        items.reserveCapacity(16)
        let capacity = items.capacity
        var seen: [Int] = []
        var released: [Bool] = []
        weak var previous: Item?
        items.takeEach { item in
            // The element handed out before this one is gone: neither the array nor anything else kept it.
            released.append(previous == nil)
            seen.append(item.number)
            previous = item
        }
        #expect(seen == Array(0..<count))
        #expect(released == Array(repeating: true, count: count))
        #expect(previous == nil)
        #expect(items.isEmpty)
        #expect(items.capacity == capacity)
    }
}
