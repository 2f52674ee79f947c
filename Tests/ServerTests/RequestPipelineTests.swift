import JSON
import Protocol
import SeededRandom
import Testing
@testable import Server

/// A connection's reply order and start rules, without a socket: what a pipelining client
/// relies on (PROTOCOL.md, "Replies on one connection come in the order of the requests").
@Suite struct RequestPipelineTests {
    private static func line(_ id: Int, _ op: String, _ arguments: String = "") -> Incoming {
        let text = #"{"id": \#(id), "op": "\#(op)"\#(arguments.isEmpty ? "" : ", " + arguments)}"#
        switch RequestDecoder.decode(line: Array(text.utf8), maxDepth: 16) {
        case .success(let request): return .request(request)
        case .failure(let failure): preconditionFailure("test line does not decode: \(failure.error.message)")
        }
    }

    private static func change(_ id: Int) -> Incoming { line(id, "adjust_points", #""delta": 1, "reason": "r""#) }
    private static func read(_ id: Int) -> Incoming { line(id, "state") }
    private static func claim(_ id: Int) -> Incoming { line(id, "claim", #""character": "mia", "device": "d""#) }
    private static let badJSON = Incoming.refusal(nil, ProtocolError(.badJSON, "not JSON"))

    /// Starts every line that may start now, as the connection does; returns their slots.
    private static func startAll(_ pipeline: inout RequestPipeline) -> [Int] {
        var slots: [Int] = []
        while let started = pipeline.startNext() {
            if case .request(_, let slot) = started { slots.append(slot) }
        }
        return slots
    }

    /// Answers a started request; `accepted` says whether the pipeline should take the answer.
    private static func answer(_ pipeline: inout RequestPipeline, _ slot: Int, _ text: String, accepted: Bool = true,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let filled = pipeline.fill(slot: slot, with: Array(text.utf8), error: nil)
        #expect(filled == accepted, sourceLocation: sourceLocation)
    }

    private static func sent(_ pipeline: inout RequestPipeline) -> [String] {
        var lines: [String] = []
        while let reply = pipeline.nextReply() { lines.append(String(decoding: reply, as: UTF8.self)) }
        return lines
    }

    @Test func repliesLeaveInRequestOrderWhateverFinishesFirst() {
        var pipeline = RequestPipeline(maxBadLines: 20)
        for id in 1...3 { pipeline.arrive(Self.change(id)) }
        let slots = Self.startAll(&pipeline)
        #expect(slots.count == 3)

        Self.answer(&pipeline, slots[2], "third")
        #expect(Self.sent(&pipeline).isEmpty)
        Self.answer(&pipeline, slots[0], "first")
        #expect(Self.sent(&pipeline) == ["first"])
        Self.answer(&pipeline, slots[1], "second")
        #expect(Self.sent(&pipeline) == ["second", "third"])
        #expect(pipeline.isEmpty)
    }

    @Test func aReadStartsOnlyOnceEveryEarlierReplyHasLeft() {
        var pipeline = RequestPipeline(maxBadLines: 20)
        pipeline.arrive(Self.change(1))
        pipeline.arrive(Self.read(2))
        pipeline.arrive(Self.change(3))
        let first = Self.startAll(&pipeline)
        #expect(first.count == 1, "the read waits, and the change behind it waits for the read")
        #expect(pipeline.waitingCount == 2)

        Self.answer(&pipeline, first[0], "one")
        #expect(Self.startAll(&pipeline).isEmpty, "answered is not enough: the reply must have left")
        #expect(Self.sent(&pipeline) == ["one"])
        let second = Self.startAll(&pipeline)
        #expect(second.count == 1, "the read starts, and the change behind it waits for its answer")
        Self.answer(&pipeline, second[0], "two")
        #expect(Self.startAll(&pipeline).count == 1, "answered: the change starts (the read's reply need not have left)")
    }

    @Test func anUnansweredClaimHoldsEveryLineBehindIt() {
        var pipeline = RequestPipeline(maxBadLines: 20)
        pipeline.arrive(Self.claim(1))
        pipeline.arrive(Self.change(2))
        let claimSlot = Self.startAll(&pipeline)
        #expect(claimSlot.count == 1)
        #expect(pipeline.waitingCount == 1, "a change does not start while the claim may change who is asking")

        Self.answer(&pipeline, claimSlot[0], "claimed")
        #expect(Self.startAll(&pipeline).count == 1, "once answered, changes pipeline behind it again")
    }

    @Test func aRefusalKeepsItsPlaceInTheReplyOrder() {
        var pipeline = RequestPipeline(maxBadLines: 20)
        pipeline.arrive(Self.change(1))
        pipeline.arrive(Self.badJSON)
        pipeline.arrive(Self.change(3))
        let slots = Self.startAll(&pipeline)
        #expect(slots.count == 2)
        #expect(pipeline.waitingCount == 0, "a refusal starts at once, answered")

        Self.answer(&pipeline, slots[1], "three")
        #expect(Self.sent(&pipeline).isEmpty)
        Self.answer(&pipeline, slots[0], "one")
        let replies = Self.sent(&pipeline)
        #expect(replies.count == 3)
        #expect(replies.first == "one")
        #expect(replies[1].contains(#""bad_json""#))
        #expect(replies.last == "three")
    }

    @Test func badLinesCountInReplyOrderAndAnOkResetsTheCount() {
        var pipeline = RequestPipeline(maxBadLines: 3)
        pipeline.arrive(Self.badJSON)
        pipeline.arrive(Self.badJSON)
        pipeline.arrive(Self.change(3))
        pipeline.arrive(Self.badJSON)
        let slots = Self.startAll(&pipeline)
        #expect(Self.sent(&pipeline).count == 2)
        #expect(pipeline.badLinesInARow == 2, "the refusal behind the unanswered change is not counted yet")

        Self.answer(&pipeline, slots[0], "ok")
        #expect(Self.sent(&pipeline).count == 2)
        #expect(pipeline.badLinesInARow == 1)
        #expect(!pipeline.hasTooManyBadLines)
    }

    /// Mutations pipeline, but not past refusals that already make `bye` certain: the change
    /// could commit, and its client would never hear of it.
    @Test func aChangeBehindEnoughRefusalsToEndTheConnectionNeverStarts() {
        var pipeline = RequestPipeline(maxBadLines: 3)
        pipeline.arrive(Self.change(1))
        for _ in 1...3 { pipeline.arrive(Self.badJSON) }
        pipeline.arrive(Self.change(5))
        let started = Self.startAll(&pipeline)
        #expect(started.count == 1, "the change behind the third refusal waits")
        #expect(pipeline.waitingCount == 1)
        Self.answer(&pipeline, started[0], "ok")
        #expect(Self.sent(&pipeline).count == 4)
        #expect(pipeline.hasTooManyBadLines)
        #expect(Self.startAll(&pipeline).isEmpty)
    }

    /// Two refusals behind a change still unanswered: that change may yet be an `ok`, which
    /// resets the count, so the change behind them goes ahead.
    @Test func aChangeBehindTooFewKnownRefusalsStarts() {
        var pipeline = RequestPipeline(maxBadLines: 3)
        for _ in 1...2 { pipeline.arrive(Self.badJSON) }
        pipeline.arrive(Self.change(3))
        for _ in 1...2 { pipeline.arrive(Self.badJSON) }
        pipeline.arrive(Self.change(6))
        #expect(Self.startAll(&pipeline).count == 2)
    }

    /// A device being cut off gets the replies it is owed, and nothing it sent after them starts.
    @Test func afterStopStartingRepliesStillLeaveButNothingStarts() {
        var pipeline = RequestPipeline(maxBadLines: 20)
        pipeline.arrive(Self.change(1))
        pipeline.arrive(Self.read(2))
        let slots = Self.startAll(&pipeline)
        pipeline.stopStarting()
        Self.answer(&pipeline, slots[0], "one")
        #expect(Self.sent(&pipeline) == ["one"])
        #expect(Self.startAll(&pipeline).isEmpty)
        #expect(pipeline.waitingCount == 1)
    }

    @Test func nothingLeavesAfterTheReplyThatReachesTheBadLineLimit() {
        var pipeline = RequestPipeline(maxBadLines: 3)
        for _ in 1...5 { pipeline.arrive(Self.badJSON) }
        _ = Self.startAll(&pipeline)
        #expect(Self.sent(&pipeline).count == 3)
        #expect(pipeline.hasTooManyBadLines)
        #expect(Self.sent(&pipeline).isEmpty, "bye comes next, and nothing after it")
    }

    @Test func aSlotIsAnsweredOnceAndOnlyWhileItWaits() {
        var pipeline = RequestPipeline(maxBadLines: 20)
        pipeline.arrive(Self.change(1))
        pipeline.arrive(Self.change(2))
        let slots = Self.startAll(&pipeline)
        Self.answer(&pipeline, slots[1], "first answer")
        Self.answer(&pipeline, slots[1], "second answer", accepted: false)
        Self.answer(&pipeline, slots[1] + 1, "never started", accepted: false)
        Self.answer(&pipeline, slots[0], "one")
        #expect(Self.sent(&pipeline) == ["one", "first answer"])
        Self.answer(&pipeline, slots[0], "already sent", accepted: false)
    }

    /// Random interleavings of arrivals, starts, answers in any order and sends: every line is
    /// answered exactly once, in arrival order, up to the reply that reaches the bad-line limit;
    /// a read starts only with no earlier reply still to leave, and nothing starts behind an
    /// unanswered claim.
    @Test(arguments: 1...40 as ClosedRange<UInt64>) func randomInterleavingsKeepTheOrderAndTheStartRules(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let maxBadLines = random.chance(50) ? random.int(1...4) : Int.max
        var pipeline = RequestPipeline(maxBadLines: maxBadLines)
        var arrived = 0
        var refused: Set<Int> = []
        /// Refused for speed: neither a bad line nor an `ok`.
        var refusedOther: Set<Int> = []
        var startedIDs: [Int] = []
        var unanswered: [(slot: Int, id: Int)] = []
        var claimsUnanswered: Set<Int> = []
        var readsUnanswered: Set<Int> = []
        var sent: [Int] = []

        func startAll() {
            while true {
                let repliesAhead = pipeline.unsentReplyCount
                guard let started = pipeline.startNext() else { return }
                guard case .request(let request, let slot) = started, case .int(let id) = request.id else { continue }
                switch request.operation {
                case .mutation:
                    #expect(claimsUnanswered.isEmpty, "seed \(seed): change \(id) started behind a claim")
                    #expect(readsUnanswered.isEmpty, "seed \(seed): change \(id) started behind a read")
                case .claim:
                    #expect(repliesAhead == 0, "seed \(seed): claim \(id) started behind earlier replies")
                    claimsUnanswered.insert(id)
                default:
                    #expect(repliesAhead == 0, "seed \(seed): read \(id) started behind earlier replies")
                    readsUnanswered.insert(id)
                }
                unanswered.append((slot, id))
                startedIDs.append(id)
            }
        }
        func answerOne() {
            guard !unanswered.isEmpty else { return }
            let (slot, id) = unanswered.remove(at: random.below(unanswered.count))
            claimsUnanswered.remove(id)
            readsUnanswered.remove(id)
            Self.answer(&pipeline, slot, "\(id)")
        }
        func send() throws {
            while let reply = pipeline.nextReply() {
                if let id = Int(String(decoding: reply, as: UTF8.self)) {
                    sent.append(id)
                } else {
                    sent.append(try #require(try JSONParser.parse(reply)["id"]?.intValue))
                }
            }
        }

        for _ in 0..<200 {
            switch random.int(1...10) {
            case 1...4:
                arrived += 1
                let line = random.weighted([
                    (5, Self.change(arrived)), (2, Self.read(arrived)), (1, Self.claim(arrived)),
                    (2, Incoming.refusal(.int(arrived), ProtocolError(.badRequest, "refused"))),
                    (1, Incoming.refusal(.int(arrived), ProtocolError(.rateLimited, "too fast"))),
                ])
                if case .refusal(_, let error) = line {
                    if error.code.isBadLine { refused.insert(arrived) } else { refusedOther.insert(arrived) }
                }
                pipeline.arrive(line)
            case 5...6: startAll()
            case 7...8: answerOne()
            default: try send()
            }
        }
        var rounds = 0
        while !pipeline.isEmpty && !pipeline.hasTooManyBadLines {
            rounds += 1
            try #require(rounds <= arrived + 1, "seed \(seed): the pipeline stopped moving")
            startAll()
            while !unanswered.isEmpty { answerOne() }
            try send()
        }

        // Every line in arrival order, to the one whose refusal makes the limit's run of bad lines.
        var expected: [Int] = []
        var badInARow = 0
        for id in 1..<(arrived + 1) where badInARow < maxBadLines {
            expected.append(id)
            if refused.contains(id) {
                badInARow += 1
            } else if !refusedOther.contains(id) {
                badInARow = 0
            }
        }
        #expect(sent == expected, "seed \(seed)")
        #expect(pipeline.hasTooManyBadLines == (badInARow >= maxBadLines), "seed \(seed)")
        // Every request answered here is an `ok`: none starts that the `bye` would leave unanswered.
        if pipeline.hasTooManyBadLines, let last = expected.last {
            #expect(startedIDs.allSatisfy { $0 <= last }, "seed \(seed): started past \(last): \(startedIDs.filter { $0 > last })")
        }
    }
}
