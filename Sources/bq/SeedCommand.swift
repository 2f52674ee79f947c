import ArgumentParser
import Domain
import Foundation
import Server

struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Check a seed file (the server seeds new games itself on first launch).",
        discussion: "Refuses a seed the server would refuse (exit 1). A valid one gets notes on what "
            + "a weekend would miss: characters without a PIN, a PIN two characters share, and an economy "
            + "outside the rule of thumb (docs/seed.md).")

    @Argument(help: "The seed file to check (without one, and no seed/birthdayquest.json here, the seed built into bq, as bq serve takes it).")
    var file: String?

    func run() throws {
        do {
            let seed = GameLoader.Seed(path: file ?? ServerConfig().seedPath, named: file != nil)
            let (content, hash) = try seed.content()
            print("\(seed.source): ok: \(content.characters.count) characters, \(content.challenges.count) challenges, \(content.rewards.count) rewards; content hash \(hash.prefix(16))")
            for note in Self.notes(on: content) { print("note: \(note)") }
        } catch {
            print("\(error)")
            throw ExitCode(1)
        }
    }

    /// What a valid seed may still get wrong for the people playing it.
    static func notes(on content: SeedContent) -> [String] {
        var notes: [String] = []
        let withoutPIN = content.characters.filter { $0.pin == nil }.map(\.id)
        if !withoutPIN.isEmpty {
            notes.append("no pin for \(withoutPIN.joined(separator: ", ")): a lost phone needs the organizer to free the character")
        }
        let byPIN = Dictionary(grouping: content.characters.filter { $0.pin != nil }, by: { $0.pin! })
        for (_, sharing) in byPIN.sorted(by: { $0.key < $1.key }) where sharing.count > 1 {
            notes.append("\(sharing.map(\.id).joined(separator: " and ")) share a pin: each can take the other's character over")
        }
        let points = content.challenges.reduce(0) { $0 + $1.fields.points }
        let costs = content.rewards.reduce(0) { $0 + $1.fields.cost }
        // Compared exactly: 638 of 900 is 70.9%, past the rule, though it rounds down to 70.
        if points > 0, costs * 100 < points * 60 || costs * 100 > points * 70 {
            let percent = String(format: "%.1f", Double(costs) * 100 / Double(points))
            notes.append("the rewards cost \(costs) points in all, \(percent)% of the \(points) the challenges are worth "
                + "(the rule of thumb is 60 to 70%: docs/seed.md)"
                + (costs > points ? "; more than the challenges give, so every reward (and with them the final badge) "
                    + "needs the dares' points or the organizer's" : ""))
        }
        return notes
    }
}
