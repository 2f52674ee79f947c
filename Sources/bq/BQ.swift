import ArgumentParser
import Benchmarks

@main
struct BQ: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bq",
        abstract: "BirthdayQuest: a real-time game server for one birthday weekend, and its clients.",
        subcommands: [Serve.self, Play.self, Admin.self, SeedCommand.self, LogCommand.self, VerifyCommand.self, BackupCommand.self, Bench.self])
}
