import Domain
import JSON

/// The `result` of a mutation's reply, read off the state its events produced (`actor` names
/// the dare of a save that changed nothing).
func mutationResult(_ command: Command, actor: Actor, events: [Event], after state: GameState) -> JSONValue {
    switch command {
    case .completeChallenge, .forceComplete, .adjustPoints:
        return .object(["points": .int(state.points)])
    case .unlockReward, .forceUnlock:
        return .object(["points": .int(state.points), "final_badge": .bool(state.hasFinalBadge)])
    case .discoverSecrets:
        let found = events.reduce(0) { count, event in
            if case .secretsDiscovered(let ids) = event.change { return count + ids.count }
            return count
        }
        return .object(["found": .int(found)])
    case .saveSecret, .deliverSecret:
        for event in events {
            switch event.change {
            case .secretSaved(let id, _, _, _, _), .secretDelivered(let id): return .object(["challenge": .string(id)])
            default: continue
            }
        }
        if case .character(let author) = actor { return .object(["challenge": .string(GameState.dareID(author: author))]) }
        return .object([:])
    case .saveChallenge(let id, _):
        for event in events { if case .challengeSaved(let saved, _, _) = event.change { return .object(["challenge": .string(saved)]) } }
        return .object(["challenge": id.map { .string($0) } ?? .null])
    case .saveReward(let id, _):
        for event in events { if case .rewardSaved(let saved, _, _) = event.change { return .object(["reward": .string(saved)]) } }
        return .object(["reward": id.map { .string($0) } ?? .null])
    case .claim, .seed, .unclaim, .triggerFinalBadge, .setDay:
        return .object([:])
    }
}
