import Domain
import Foundation
import JSON
import Testing
@testable import EventLog
@testable import Server

/// Start-up checks the newest snapshot against the one before it and the events between:
/// a snapshot that reads well but was damaged or edited by hand (points, an unlocked gift)
/// would otherwise be served, and copied into every later snapshot, without a word.
@Suite struct SnapshotCheckTests {
    /// A game with a snapshot every 4 events, played past several; returns its log's path.
    private static func play(in dir: TempDirectory) throws -> String {
        let server = try ServerHarness(dataDirectory: dir.path) { $0.snapshotEvery = 4 }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        for delta in 1...13 { try admin.ok("adjust_points", ["delta": .int(delta), "reason": .string("round \(delta)")]) }
        try server.stop()
        return dir.path + "/birthdayquest.sqlite"
    }

    /// Runs `body` on the log of a game played as `play` does.
    private static func withPlayedLog(_ body: (EventStore) throws -> Void) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: try play(in: dir), options: StoreOptions(synchronous: .full))
        defer { store.close() }
        try body(store)
    }

    private static func load(_ store: EventStore) throws -> GameLoader.Loaded {
        try GameLoader.load(game: "main", from: store, idempotencyWindow: 1_000)
    }

    /// Edits the snapshot at `version` by hand: `earned` gets a 9 in front, unless `edit` says
    /// otherwise.
    private static func tamper(_ store: EventStore, version: Int64, _ state: String,
                               edit: (from: String, to: String) = ("\"earned\":", "\"earned\":9")) throws {
        let edited = state.replacingOccurrences(of: edit.from, with: edit.to)
        try #require(edited != state, "the snapshot spells `earned` as expected")
        try store.executeForTesting("UPDATE snapshots SET state = '\(edited.replacingOccurrences(of: "'", with: "''"))' "
            + "WHERE game = 'main' AND version = \(version)")
    }

    @Test func snapshotsThatAgreeAreUsed() throws {
        try Self.withPlayedLog { store in
            let newest = try #require(try store.latestSnapshot(game: "main"))
            let loaded = try Self.load(store)
            #expect(loaded.passedOver == nil && loaded.distrusted.isEmpty && loaded.unchecked == nil)
            #expect(loaded.snapshotVersion == Int(newest.version))
        }
    }

    /// Edited, the newest or the one before it: the log from its first event says which, and is
    /// what is served; a sound newest snapshot still stands.
    @Test(arguments: [0, 1])
    func aSnapshotEditedByHandIsFoundAndTheLogServed(fromTheNewest place: Int) throws {
        try Self.withPlayedLog { store in
            let truth = try Self.load(store).state
            let snapshots = try store.snapshots(game: "main").sorted { $0.version > $1.version }
            try #require(snapshots.count >= 3)
            let edited = snapshots[place]
            try Self.tamper(store, version: edited.version, edited.state)

            let loaded = try Self.load(store)
            #expect(loaded.state == truth, "the game served is the log's")
            #expect(loaded.distrusted.map { "\($0)" }
                    == ["the snapshot at version \(edited.version) differs from its events, replayed from the first at /earned"])
            #expect(loaded.snapshotVersion == (place == 0 ? 0 : Int(snapshots[0].version)),
                    "a new snapshot is due at the next change only when the newest was the edited one")
        }
    }

    /// An event before the newest snapshot that cannot be read stopped no start-up before the
    /// check, and stops none now: the snapshot is served unchecked, and said to be.
    @Test func aSnapshotThatCannotBeCheckedIsServedAsBefore() throws {
        try Self.withPlayedLog { store in
            let truth = try Self.load(store).state
            let newest = try #require(try store.latestSnapshot(game: "main"))
            try store.executeForTesting("UPDATE events SET payload = '{' WHERE game = 'main' AND version = \(newest.version - 1)")
            let loaded = try Self.load(store)
            #expect(loaded.state == truth)
            #expect(loaded.unchecked?.contains("event \(newest.version - 1)") == true, "\(loaded.unchecked ?? "nil")")
            #expect(loaded.snapshotVersion == Int(newest.version))
        }
    }

    /// Snapshots that disagree, and an event before both that cannot be read: which one is
    /// wrong cannot be told, and the newest is served as before the check, said to be.
    @Test func snapshotsThatDisagreeOverADamagedLogAreSaidToBeUnchecked() throws {
        try Self.withPlayedLog { store in
            let newest = try #require(try store.latestSnapshot(game: "main"))
            try Self.tamper(store, version: newest.version, newest.state)
            try store.executeForTesting("UPDATE events SET payload = '{' WHERE game = 'main' AND version = 3")
            let loaded = try Self.load(store)
            #expect(loaded.distrusted.isEmpty)
            #expect(loaded.unchecked?.hasPrefix("it disagrees with the one before it and the events between them, and which is "
                    + "wrong cannot be told: Game main: event 3") == true, "\(loaded.unchecked ?? "nil")")
            #expect(loaded.snapshotVersion == Int(newest.version))
        }
    }

    /// A resume from past an edited snapshot is rebuilt from the log, as start-up's state is.
    @Test func aResumePastAnEditedSnapshotIsRebuiltWithoutIt() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let configure: (inout ServerConfig) -> Void = { $0.snapshotEvery = 4 }
        let first = try ServerHarness(dataDirectory: dir.path, configure: configure)
        let admin = try first.connect()
        try admin.signInAsAdmin()
        let mia = try first.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        for delta in 1...9 { try admin.ok("adjust_points", ["delta": .int(delta), "reason": .string("round \(delta)")]) }
        try mia.subscribe()
        let from = mia.mirrorVersion
        let view = try #require(mia.mirror)
        try admin.ok("adjust_points", ["delta": 10, "reason": "after the resume's version"])
        try first.stop()

        let path = dir.path + "/birthdayquest.sqlite"
        let store = try EventStore(path: path, options: StoreOptions(synchronous: .full))
        let newest = try #require(try store.snapshots(game: "main").filter { $0.version <= from }.last)
        // Edited to what the game holds now: a view rebuilt from it then differs from the game
        // only where the client's copy does not, and no patch would mend the client's copy.
        let earned = try #require(try JSONParser.parse(Array(newest.state.utf8))["earned"]?.intValue)
        try Self.tamper(store, version: newest.version, newest.state, edit: ("\"earned\":\(earned),", "\"earned\":\(earned + 10),"))
        store.close()

        let second = try ServerHarness(dataDirectory: dir.path, configure: configure)
        defer { try? second.stop() }
        let resuming = try second.connect()
        try resuming.ok("claim", ["character": "mia", "device": "phone"])
        resuming.adoptMirror(view, version: from)
        let resumed = try resuming.subscribe(since: from)
        #expect(resumed["result"]?["mode"] == .string("patch"))
        try resuming.checkMirror(step: "after the resume from \(from)")
        #expect(resuming.problems == [])
    }
}
