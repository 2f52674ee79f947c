import Foundation
import JSON
import Testing

/// An edit fills in the fields not given from the item as it read it. Written back over a change
/// made meanwhile, that would undo the change: the edit expects the version it read, and when
/// the game has moved on it reads again and merges over the fresh item.
@Suite struct EditRaceTests {
    @Test func anEditMadeMeanwhileIsKeptNotOverwritten() throws {
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var states = 0
            var saves: [JSONValue] = []
        }
        let script = Script()
        @Sendable func challenge(title: String) -> JSONValue {
            ["title": .string(title), "description": "Ask three strangers", "option_b": .null, "points": 35,
             "difficulty": "easy", "category": "social", "secret": false, "author": .null, "status": "open",
             "completed_at": .null, "option": .null, "proof": .null, "forced": false]
        }
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 5]) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "admin":
                return [["id": id, "ok": true, "version": 5, "result": ["role": "admin"]]]
            case "state":
                // Sam renames the challenge between the console's first read and its save.
                let first = script.lock.withLock { script.states += 1; return script.states == 1 }
                let title = first ? "Wisdom From Strangers" : "Wisdom From Six Strangers"
                return [["id": id, "ok": true, "version": first ? 5 : 6,
                         "result": ["state": ["challenges": ["c02": challenge(title: title)]]]]]
            case "save_challenge":
                let count = script.lock.withLock { script.saves.append(request); return script.saves.count }
                guard count > 1 else {
                    return [["id": id, "ok": false, "version": 6,
                             "error": ["code": "version_conflict", "message": "The game is at version 6, not 5"]]]
                }
                return [["id": id, "ok": true, "version": 7, "result": ["challenge": "c02"]]]
            default:
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
        defer { fake.stop() }
        let edited = try BQProcess.run(["admin", "edit-challenge", "c02", "--points", "45", "--port", String(fake.port), "--key", "k"])
        #expect(edited.status == 0, "\(edited.err)")
        #expect(edited.out.contains("Saved challenge c02."), "\(edited.out)")
        let saves = script.lock.withLock { script.saves }
        #expect(saves.map { $0["expect"] } == [5, 6])
        #expect(saves.last?["title"] == "Wisdom From Six Strangers", "Sam's rename survives")
        #expect(saves.last?["points"] == 45)
    }
}
