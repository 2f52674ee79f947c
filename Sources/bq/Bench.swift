import ArgumentParser

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Not built yet.")

    func run() throws {
        print("bq bench is not built yet")
        throw ExitCode(1)
    }
}
