import Domain
import Testing

/// A game history to run a command against: "given these events".
/// Each step is one second after the previous one, so times in events are predictable.
struct Scenario {
    var events: [Event]
    var state: GameState
    var now: Millis

    /// The fixture game right after seeding (version 1, nobody has claimed anything).
    static var seeded: Scenario {
        let seed = Fixture.seedEvent
        return Scenario(events: [seed], state: replay([seed]), now: seed.at)
    }

    /// The game before anything happened, not even the seed.
    static var empty: Scenario { Scenario(events: [], state: GameState(), now: Fixture.startTime - 1000) }

    /// Adds an event as history, without asking `decide`: for states that are tedious to reach.
    func and(_ change: Change, by actor: Actor = .admin) -> Scenario {
        var next = self
        next.now += 1000
        let event = Event(at: next.now, actor: actor, change: change)
        next.events.append(event)
        next.state.apply(event)
        return next
    }

    /// Runs a command that must succeed, and keeps its events as history.
    func after(_ actor: Actor, _ command: Command, sourceLocation: SourceLocation = #_sourceLocation) -> Scenario {
        let outcome = when(actor, command)
        switch outcome.result {
        case .success(let events): return outcome.applying(events)
        case .failure(let rejection):
            Issue.record("given step \(command) by \(actor) was refused: \(rejection)", sourceLocation: sourceLocation)
            return self
        }
    }

    /// "When this command by this actor": decides it one second after the last event.
    func when(_ actor: Actor, _ command: Command, claimsNeedPIN: Bool = false) -> Outcome {
        let context = CommandContext(actor: actor, at: now + 1000, claimsNeedPIN: claimsNeedPIN)
        return Outcome(before: self, context: context, command: command, result: decide(state, command, context))
    }
}

/// Starts a scenario from the seeded fixture game plus these events.
func given(_ changes: Change...) -> Scenario {
    changes.reduce(Scenario.seeded) { $0.and($1) }
}

/// What `decide` answered, with the "then" checks.
struct Outcome {
    let before: Scenario
    let context: CommandContext
    let command: Command
    let result: Result<[Event], Rejection>

    func applying(_ events: [Event]) -> Scenario {
        var next = before
        next.now = context.at
        next.events += events
        for event in events { next.state.apply(event) }
        return next
    }

    /// Then exactly these changes, stamped with the command's time and actor.
    /// Returns the game after them, for checks on the resulting state.
    @discardableResult
    func then(_ expected: [Change], actor: Actor? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Scenario {
        switch result {
        case .failure(let rejection):
            Issue.record("expected \(expected.map(\.type)), got rejection \(rejection)", sourceLocation: sourceLocation)
            return before
        case .success(let events):
            #expect(events.map(\.change) == expected, sourceLocation: sourceLocation)
            let expectedActor = actor ?? context.actor
            for event in events {
                #expect(event.at == context.at && event.actor == expectedActor, "event stamp \(event.at) \(event.actor)", sourceLocation: sourceLocation)
            }
            let after = applying(events)
            #expect(after.state.version == before.state.version + events.count, sourceLocation: sourceLocation)
            return after
        }
    }

    /// Then the command succeeds and commits nothing: the version stays where it was.
    func thenNothingHappens(sourceLocation: SourceLocation = #_sourceLocation) {
        then([], sourceLocation: sourceLocation)
    }

    /// Then it is refused with this code and a message containing this fragment (and, when
    /// given, naming this field of the request apart from the message).
    func thenRejected(_ code: RejectionCode, _ fragment: String, field: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        switch result {
        case .success(let events):
            Issue.record("expected \(code.rawValue), got events \(events.map(\.type))", sourceLocation: sourceLocation)
        case .failure(let rejection):
            #expect(rejection.code == code, "\(rejection)", sourceLocation: sourceLocation)
            #expect(rejection.message.contains(fragment), "message \"\(rejection.message)\" lacks \"\(fragment)\"", sourceLocation: sourceLocation)
            if let field { #expect(rejection.field == field, "\(rejection)", sourceLocation: sourceLocation) }
        }
    }

    /// Then it is refused as forbidden (the role check comes before anything else).
    func thenForbidden(sourceLocation: SourceLocation = #_sourceLocation) {
        thenRejected(.forbidden, "Only", sourceLocation: sourceLocation)
    }
}

/// A string of exactly `count` characters, for length limits.
func chars(_ count: Int) -> String { String(repeating: "x", count: count) }

/// A timeline entry the tests can build: the domain's own type has no public initializer.
struct Entry: Equatable, CustomStringConvertible {
    var seq: Int
    var at: Millis
    var kind: TimelineKind
    var ref: String?
    var title: String
    var subtitle: String
    var from: String?

    var description: String { "#\(seq) \(kind.rawValue) \(ref ?? "-") \"\(title)\" \(subtitle) from \(from ?? "-") at \(at)" }
}

extension TimelineEntry {
    var fields: Entry { Entry(seq: seq, at: at, kind: kind, ref: ref, title: title, subtitle: subtitle, from: from) }
}
