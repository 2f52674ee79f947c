import Foundation
import JSON
@testable import Server
import Testing

/// A seed path that cannot be read says why, for the organizer who typed it.
@Suite struct SeedFileErrorTests {
    @Test func aDirectoryGivenAsTheSeedIsNamedSoThroughALinkToo() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let folder = dir.path + "/seeds"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: folder)
        #expect(message(readingSeed: folder) == "\(folder): cannot read the seed file: it is a directory")
        #expect(message(readingSeed: dir.path + "/link") == "\(dir.path)/link: cannot read the seed file: it is a directory")
        #expect(message(readingSeed: dir.path + "/none.json") == "\(dir.path)/none.json: cannot read the seed file: No such file or directory")
    }

    /// A seed is fixed in a text editor: a JSON mistake is placed by line and column.
    @Test func aSeedThatIsNotJSONIsPlacedByLineAndColumn() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let path = dir.path + "/broken.json"
        try Data("{\n  \"title\": \"x\",\n  \"characters\": [ \"a\" \"b\" ]\n}\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(message(readingSeed: path) == "\(path): not valid JSON: unexpected character '\"' at byte 40 (line 3, column 23)")
    }

    /// `bq seed` passes a valid seed and notes what the weekend would miss: a character
    /// without a PIN, a PIN two share, rewards that cost more than the rule of thumb.
    @Test func bqSeedNotesMissingAndSharedPINsAndTheEconomy() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let shipped = try BQRun.run(["seed", Repo.seedPath], workingDirectory: dir.path)
        #expect(shipped.ending == .exited(0))
        #expect(shipped.stdoutLines.count == 1, "the shipped seed needs no note: \(shipped.stdout)")

        var seed = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Repo.seedPath))))
        seed = try JSONPatch.apply([.remove(path: "/characters/0/pin"), .replace(path: "/characters/3/pin", value: "4242"),
                                    .replace(path: "/characters/4/pin", value: "4242"), .replace(path: "/rewards/0/cost", value: 113)], to: seed)
        let path = dir.path + "/careless.json"
        try Data(seed.serialized().utf8).write(to: URL(fileURLWithPath: path))
        let careless = try BQRun.run(["seed", path], workingDirectory: dir.path)
        #expect(careless.ending == .exited(0))
        let notes = careless.stdoutLines.dropFirst()
        #expect(notes.count == 3, "\(careless.stdout)")
        #expect(notes.contains { $0.hasPrefix("note: no pin for mia:") }, "\(careless.stdout)")
        #expect(notes.contains { $0.hasPrefix("note: theo and dani share a pin") }, "\(careless.stdout)")
        // 638 of 900: 70.9%, past the rule of thumb by less than a point.
        #expect(notes.contains { $0.hasPrefix("note: the rewards cost 638 points in all, 70.9% of the 900") }, "\(careless.stdout)")
        #expect(!careless.stdout.contains("more than the challenges give"), "\(careless.stdout)")

        // Rewards dearer than every challenge together: the final badge is out of the challenges' reach.
        let dear = try JSONPatch.apply([.replace(path: "/rewards/0/cost", value: 1000)], to: seed)
        let dearPath = dir.path + "/dear.json"
        try Data(dear.serialized().utf8).write(to: URL(fileURLWithPath: dearPath))
        let tooDear = try BQRun.run(["seed", dearPath], workingDirectory: dir.path)
        #expect(tooDear.stdout.contains("; more than the challenges give, so every reward (and with them the final badge) "
                                        + "needs the dares' points or the organizer's"), "\(tooDear.stdout)")
    }

    /// Outside the repository `bq seed` checks what `bq serve` would seed there: the built-in copy.
    @Test func bqSeedWithoutASeedHereChecksTheBuiltInOne() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let run = try BQRun.run(["seed"], workingDirectory: dir.path)
        #expect(run.ending == .exited(0), "\(run.stdout)")
        #expect(run.stdout.hasPrefix("the built-in seed (no seed/birthdayquest.json in "), "\(run.stdout)")
        #expect(run.stdout.contains(": ok: 5 characters, 15 challenges, 9 rewards"), "\(run.stdout)")
    }

    private func message(readingSeed path: String) -> String? {
        do {
            _ = try GameLoader.readSeed(path: path)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
