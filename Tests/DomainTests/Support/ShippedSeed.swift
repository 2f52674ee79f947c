import Domain
import Foundation
import JSON
import Views

/// The repository's own files, found from this source file's location so the
/// tests do not depend on the working directory they run in.
enum Repository {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // DomainTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(relativePath)))
    }
}

/// seed/birthdayquest.json, as JSON and as parsed content.
enum ShippedSeed {
    static let file = "seed/birthdayquest.json"

    static func json() throws -> JSONValue { try JSONParser.parse(try Repository.bytes(file)) }

    static func content() throws -> SeedContent { try SeedParser.parse(try json(), file: file) }

    /// The seed file with one JSON Patch applied: how the error tests break it.
    static func parse(patchedWith ops: [PatchOp]) throws -> Result<SeedContent, SeedError> {
        let broken = try JSONPatch.apply(ops, to: try json())
        return Result { () throws(SeedError) in try SeedParser.parse(broken, file: file) }
    }

    /// A game right after `decide` seeded it with the shipped content.
    static func seededGame(at time: Millis = Fixture.startTime) throws -> (state: GameState, events: [Event]) {
        let context = CommandContext(actor: .system, at: time)
        let events = try decide(GameState(), .seed(try content(), hash: "shipped"), context).get()
        return (replay(events), events)
    }
}

extension Scenario {
    /// The shipped seed's game right after seeding, for tests that want the real content.
    static func shipped() throws -> Scenario {
        let (state, events) = try ShippedSeed.seededGame()
        return Scenario(events: events, state: state, now: Fixture.startTime)
    }
}
