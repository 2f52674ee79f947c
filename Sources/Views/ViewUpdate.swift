import Domain
import JSON

/// What a batch of committed events may have changed, so that a view can be
/// brought up to date by re-projecting only those members instead of the whole
/// game. `everything` falls back to a full projection and diff.
public struct Touched: Sendable, Equatable {
    public var everything = false
    public var characters: Set<String> = []
    public var challenges: Set<String> = []
    public var rewards: Set<String> = []

    public init() {}

    public init(_ events: some Sequence<Event>) {
        for event in events { add(event.change) }
    }

    public mutating func add(_ change: Change) {
        switch change {
        case .gameSeeded: everything = true
        case .characterClaimed(let id, _, _, _, _), .characterUnclaimed(let id): characters.insert(id)
        case .challengeCompleted(let id, _, _, _, _), .secretSaved(let id, _, _, _, _), .secretDelivered(let id), .challengeSaved(let id, _, _):
            challenges.insert(id)
        case .secretsDiscovered(let ids): challenges.formUnion(ids)
        case .rewardUnlocked(let id, _, _), .rewardSaved(let id, _, _): rewards.insert(id)
        case .finalBadgeUnlocked, .pointsAdjusted, .daySet: break
        }
    }
}

/// A viewer's next view and the patch that turns the previous one into it.
public struct ViewUpdate: Sendable {
    public let view: JSONValue
    public let ops: [PatchOp]
}

/// Brings `old` (this viewer's view before the events) up to date with `state`,
/// touching only what the events touched: the game numbers, the members named
/// in `touched`, and the new timeline entries. Gives the same view and an
/// equivalent patch as `view` plus `JSONPatch.diff`, which the tests check.
public func updateView(_ old: JSONValue, to state: GameState, for viewer: Viewer, touched: Touched) -> ViewUpdate {
    var current = old
    let ops = updateView(&current, to: state, for: viewer, touched: touched)
    return ViewUpdate(view: current, ops: ops)
}

/// The same, in place: when the caller holds the only reference to the view, no
/// member table is copied, so the cost follows what changed, not the game's size.
public func updateView(_ current: inout JSONValue, to state: GameState, for viewer: Viewer, touched: Touched) -> [PatchOp] {
    guard !touched.everything, case .object(var top) = current else { return replaceWholeView(&current, state, viewer) }
    current = .null  // `top` is now the only reference to the view's storage
    guard case .object(var characters)? = top.removeValue(forKey: "characters"),
          case .object(var challenges)? = top.removeValue(forKey: "challenges"),
          case .object(var rewards)? = top.removeValue(forKey: "rewards"),
          case .array(var timeline)? = top.removeValue(forKey: "timeline"),
          case .object(var game)? = top.removeValue(forKey: "game"), timeline.count <= state.timeline.count else {
        return replaceWholeView(&current, state, viewer)
    }
    let lens = Lens(state: state, viewer: viewer)
    var ops: [PatchOp] = []

    // In place: most commits change one or two numbers here.
    forEachGameMember(state) { key, value in
        guard let was = game[key] else {
            ops.append(.add(path: "/game/" + key, value: value))
            game[key] = value
            return
        }
        if was != value {
            ops.append(.replace(path: "/game/" + key, value: value))
            game[key] = value
        }
    }
    top["game"] = .object(game)

    for id in touched.characters.sorted() {
        let fresh = state.characters[id].map(characterView)
        update(&characters, id, to: fresh, section: "characters", ops: &ops)
    }
    for id in touched.challenges.sorted() {
        // Spelled out: a bare `nil` here would be JSONValue's nil literal, `.null`, not absence.
        var fresh: JSONValue?
        if let challenge = state.challenges[id], lens.canSee(challenge) { fresh = challengeView(challenge) }
        update(&challenges, id, to: fresh, section: "challenges", ops: &ops)
    }
    for id in touched.rewards.sorted() {
        let fresh = state.rewards[id].map { rewardView($0, withContent: lens.canReadContent($0)) }
        update(&rewards, id, to: fresh, section: "rewards", ops: &ops)
    }
    for entry in state.timeline[timeline.count...] {
        let value = timelineView(entry)
        ops.append(.add(path: "/timeline/-", value: value))
        timeline.append(value)
    }
    top["characters"] = .object(characters)
    top["challenges"] = .object(challenges)
    top["rewards"] = .object(rewards)
    top["timeline"] = .array(timeline)
    current = .object(top)
    return ops
}

/// The reference path: project everything and diff.
private func replaceWholeView(_ current: inout JSONValue, _ state: GameState, _ viewer: Viewer) -> [PatchOp] {
    let fresh = view(state, for: viewer)
    let ops = JSONPatch.diff(current, fresh)
    current = fresh
    return ops
}

private func update(_ members: inout [String: JSONValue], _ id: String, to fresh: JSONValue?, section: String, ops: inout [PatchOp]) {
    let path = "/\(section)/\(JSONPatch.escapeToken(id))"
    switch (members[id], fresh) {
    case (nil, nil): return
    case (nil, let added?): ops.append(.add(path: path, value: added))
    case (_?, nil): ops.append(.remove(path: path))
    case (let before?, let after?): ops += JSONPatch.diff(before, after, path: path)
    }
    members[id] = fresh
}
