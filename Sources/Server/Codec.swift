import Domain
import EventLog
import Foundation
import JSON
import Views

/// How domain values become log rows and back. Events and snapshots are JSON
/// text so that `bq log`, `sqlite3` and people can read the log without this code.
enum Codec {
    /// The row to append for `event`; `idempotencyKey` is the key of the request that made it.
    static func newEvent(_ event: Event, idempotencyKey: String?) -> NewEvent {
        NewEvent(type: event.type, actor: event.actor.logName, at: event.at,
                 idempotencyKey: idempotencyKey, payload: EventCoding.payloadText(event.change))
    }

    /// A row read back from the log; throws when its payload does not decode (a log edited by
    /// hand, or written by a newer version).
    static func event(_ stored: StoredEvent) throws -> Event {
        let payload = try JSONParser.parse(Array(stored.payload.utf8), maxDepth: 64)
        let change = try EventCoding.decode(type: stored.type, payload: payload)
        return Event(at: stored.at, actor: Actor(logName: stored.actor), change: change)
    }

    /// Applies `stored` to `state` when it is the next version, the one rule every replay of the
    /// log follows (start-up, `bq verify`, rebuilding a past view); else says what is wrong, and
    /// `state` is as it was.
    static func applyNext(_ stored: StoredEvent, to state: inout GameState) throws(ReplayProblem) {
        guard stored.version == Int64(state.version + 1) else {
            throw .gap(found: stored.version, after: state.version)
        }
        do {
            state.apply(try event(stored))
        } catch {
            throw .unreadable(version: stored.version, type: stored.type, error: error)
        }
    }

    /// The whole state at its version, for a faster start-up and for rebuilding past views.
    static func snapshot(_ state: GameState) throws -> Snapshot {
        Snapshot(version: Int64(state.version), state: try encode(state))
    }

    /// A snapshot read back; the caller checks that its version is the snapshot's.
    static func state(_ snapshot: Snapshot) throws -> GameState {
        try JSONDecoder().decode(GameState.self, from: Data(snapshot.state.utf8))
    }

    /// The state a snapshot holds, at the snapshot's version, or why it cannot stand in for its
    /// events: damaged, or written by a build whose state had other fields. A snapshot only
    /// shortens a replay, so a caller replays from the first event instead; `bq verify` still
    /// reports it.
    static func usableState(_ snapshot: Snapshot) throws(UnusableSnapshot) -> GameState {
        let state: GameState
        do {
            state = try Self.state(snapshot)
        } catch {
            throw UnusableSnapshot(version: snapshot.version, reason: "cannot be read (\(error))")
        }
        guard state.version == Int(snapshot.version) else {
            throw UnusableSnapshot(version: snapshot.version, reason: "holds version \(state.version)")
        }
        return state
    }

    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Why a snapshot is passed over.
struct UnusableSnapshot: Error, CustomStringConvertible {
    let version: Int64
    let reason: String

    var description: String { "the snapshot at version \(version) \(reason)" }
}

/// Why a stored event cannot be applied next.
enum ReplayProblem: Error, CustomStringConvertible {
    /// The log skips from `after` to `found`.
    case gap(found: Int64, after: Int)
    /// The event's payload does not decode (a log edited by hand, or written by a newer version).
    case unreadable(version: Int64, type: String, error: any Error)

    var description: String {
        switch self {
        case .gap(let found, let after): "version \(found) follows \(after): the log has a gap"
        case .unreadable(let version, let type, let error): "event \(version) (\(type)) cannot be read: \(error)"
        }
    }
}
