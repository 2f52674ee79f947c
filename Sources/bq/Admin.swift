import ArgumentParser

struct Admin: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "admin", abstract: "Not built yet.")

    func run() throws {
        print("bq admin is not built yet")
        throw ExitCode(1)
    }
}
