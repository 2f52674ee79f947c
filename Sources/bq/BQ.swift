import ArgumentParser
import Benchmarks
import EventLog
import Server

@main
struct BQ: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bq",
        abstract: "BirthdayQuest: a real-time game server for one birthday weekend, and its clients.",
        // Which build runs, and which logs it opens: one writing a newer schema has logs this one refuses.
        version: "bq \(GameServer.version) (event log schema \(EventStore.currentSchemaVersion))",
        subcommands: [Serve.self, Play.self, Admin.self, SeedCommand.self, LogCommand.self, VerifyCommand.self, BackupCommand.self, Bench.self])
}
