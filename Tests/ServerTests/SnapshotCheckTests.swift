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

    private static func load(_ store: EventStore) throws -> GameLoader.Loaded {
        try GameLoader.load(game: "main", from: store, idempotencyWindow: 1_000)
    }

    private static func tamper(_ store: EventStore, version: Int64, _ state: String) throws {
        let edited = state.replacingOccurrences(of: "\"earned\":", with: "\"earned\":9")
        try #require(edited != state, "the snapshot spells `earned` as expected")
        try store.executeForTesting("UPDATE snapshots SET state = '\(edited.replacingOccurrences(of: "'", with: "''"))' "
            + "WHERE game = 'main' AND version = \(version)")
    }

    @Test func snapshotsThatAgreeAreUsed() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: try Self.play(in: dir), options: StoreOptions(synchronous: .full))
        defer { store.close() }
        let newest = try #require(try store.latestSnapshot(game: "main"))
        let loaded = try Self.load(store)
        #expect(loaded.passedOver == nil)
        #expect(loaded.snapshotVersion == Int(newest.version))
    }

    @Test(arguments: [0, 1])
    func aSnapshotEditedByHandIsPassedOverAndTheLogServed(fromTheNewest place: Int) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: try Self.play(in: dir), options: StoreOptions(synchronous: .full))
        defer { store.close() }
        let truth = try Self.load(store).state
        let snapshots = try store.snapshots(game: "main").sorted { $0.version > $1.version }
        try #require(snapshots.count >= 3)
        let edited = snapshots[place], newest = snapshots[0], before = snapshots[1]
        try Self.tamper(store, version: edited.version, edited.state)

        let loaded = try Self.load(store)
        #expect(loaded.state == truth, "the game served is the log's")
        #expect(loaded.snapshotVersion == 0, "the next change writes a new snapshot")
        let said = loaded.passedOver.map { "\($0)" } ?? ""
        #expect(said == "the snapshot at version \(newest.version) disagrees with the one at version \(before.version) "
                + "and the events between them at /earned", "\(said)")
    }
}
