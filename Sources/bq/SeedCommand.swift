import ArgumentParser
import Server

struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "seed", abstract: "Check a seed file (the server seeds new games itself on first launch).")

    @Argument(help: "The seed file to check.") var file: String = "seed/birthdayquest.json"

    func run() throws {
        do {
            let (content, hash) = try GameLoader.readSeed(path: file)
            print("\(file): ok: \(content.characters.count) characters, \(content.challenges.count) challenges, \(content.rewards.count) rewards; content hash \(hash.prefix(16))")
        } catch {
            print("\(error)")
            throw ExitCode(1)
        }
    }
}
