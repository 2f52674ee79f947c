import ArgumentParser
import EventLog
import Foundation
import POSIXSupport
import Server

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the event log to a new file, consistent and whole, also while bq serve runs.",
        discussion: """
            The copy is one SQLite file that holds every game as it stood at one moment. To restore it, \
            stop the server and put it in an empty data directory as birthdayquest.sqlite (with the \
            admin.key, or a new key is made). Copying birthdayquest.sqlite alone while the server runs \
            may copy none of the game: recent changes live in its -wal file.
            """)

    @OptionGroup var options: DataOptions
    @Argument(help: "The file to write; it must not exist yet.") var file: String

    func run() throws {
        let config = try options.loadExistingLog(command: "backup")
        guard !FileManager.default.fileExists(atPath: file) else { throw failure("\(file) already exists: name a new file") }
        // Written under a name that says it is unfinished, then given its own once whole and on
        // disk: a backup cut short (killed, a full disk) never leaves a broken file under the
        // name a person would restore from. Made first, for its owner alone: the copy holds
        // PINs, gifts and dares.
        let partial = file + ".partial-\(getpid())"
        let created: Bool
        do {
            created = try createEmptyFile(partial, mode: 0o600)
        } catch {
            throw failure("cannot create \(partial): \(systemErrorText(error.code))")
        }
        guard created else { throw failure("\(partial) already exists: remove it, or name a new file") }
        defer {
            removeFile(partial)
            removeFile(partial + "-journal")
        }
        do throws(StorageError) {
            let store = try EventStore(path: config.databasePath, options: config.readerOptions)
            defer { store.close() }
            warnOfFramesLost(store, path: config.databasePath, command: "backup")
            try store.backup(to: partial)
        } catch {
            // The copy is written where it was asked for; a log left by a crash needs room where it is, too.
            let destination = GameServer.fullDiskHint(URL(fileURLWithPath: partial).deletingLastPathComponent().path,
                                                       advice: "free some space, or back up to another disk")
            throw failure("cannot copy \(config.databasePath): \(error)"
                + (destination.isEmpty ? GameServer.fullDiskHint(config.dataDirectory, advice: "free some space") : destination))
        }
        do {
            let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
            try syncToDisk(file: partial, directory: directory)
            guard try placeFile(partial, at: file) else { throw failure("\(file) already exists: name a new file") }
            try syncToDisk(file: file, directory: directory)
        } catch let error as SystemError {
            throw failure("cannot write \(file): \(error.operation): \(systemErrorText(error.code))")
        }
        // Read back, so that what is said is what the copy holds.
        do throws(StorageError) {
            let copy = try EventStore(path: file, options: StoreOptions(readOnly: true))
            defer { copy.close() }
            for game in try copy.games().sorted() {
                print("game \(game): \(try copy.version(game: game)) events")
            }
        } catch {
            throw failure("the copy \(file) cannot be read back: \(error)")
        }
        print("backed up \(config.databasePath) to \(file)")
    }

    private func failure(_ message: String) -> ExitCode {
        try? FileHandle.standardError.write(contentsOf: Data("bq backup: \(message)\n".utf8))
        return ExitCode.failure
    }
}
