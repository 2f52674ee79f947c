import Domain
import EventLog
import Foundation
import JSON
import Views

/// How domain values become log rows and back. Events and snapshots are JSON
/// text so that `bq log`, `sqlite3` and people can read the log without this code.
public enum Codec {
    public static func newEvent(_ event: Event, idempotencyKey: String?) -> NewEvent {
        NewEvent(type: event.type, actor: event.actor.logName, at: event.at,
                 idempotencyKey: idempotencyKey, payload: EventCoding.payloadText(event.change))
    }

    public static func event(_ stored: StoredEvent) throws -> Event {
        let payload = try JSONParser.parse(Array(stored.payload.utf8), maxDepth: 64)
        let change = try EventCoding.decode(type: stored.type, payload: payload)
        return Event(at: stored.at, actor: Actor(logName: stored.actor), change: change)
    }

    public static func snapshot(_ state: GameState) throws -> Snapshot {
        Snapshot(version: Int64(state.version), state: try encode(state))
    }

    public static func state(_ snapshot: Snapshot) throws -> GameState {
        try JSONDecoder().decode(GameState.self, from: Data(snapshot.state.utf8))
    }

    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
