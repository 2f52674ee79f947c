/// A first-in, first-out queue. Taking from the front moves nothing: with
/// hundreds of commands in flight per game, an array's `removeFirst` would
/// shift all of them for every commit.
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }
    /// The queued elements, front first.
    var elements: ArraySlice<Element> { storage[head...] }

    /// The element `offset` places behind the front.
    subscript(offset: Int) -> Element {
        get { storage[head + offset] }
        set { storage[head + offset] = newValue }
    }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1_024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Empties the queue and returns what it held, front first.
    mutating func removeAll() -> [Element] {
        let all = Array(elements)
        storage.removeAll(keepingCapacity: true)
        head = 0
        return all
    }
}
