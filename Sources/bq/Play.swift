import ArgumentParser

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Not built yet.")

    func run() throws {
        print("bq play is not built yet")
        throw ExitCode(1)
    }
}
