@testable import Server
import Testing

@Suite struct FIFOTests {
    @Test func keepsOrderAcrossCompactions() {
        var queue = FIFO<Int>()
        var expected: [Int] = []
        var next = 0
        // Interleave pushes and pops past the compaction threshold several times.
        for round in 0..<50 {
            for _ in 0..<(100 + round) { queue.append(next); expected.append(next); next += 1 }
            for _ in 0..<90 { #expect(queue.popFirst() == expected.removeFirst()) }
            #expect(Array(queue.elements) == expected)
            #expect(queue.first == expected.first)
        }
        #expect(queue.removeAll() == expected)
        #expect(queue.isEmpty && queue.popFirst() == nil)
    }
}
