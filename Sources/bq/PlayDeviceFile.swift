import Client
import Foundation
import JSON
import POSIXSupport

/// What `bq play` keeps between runs: the device id (made once) and the session token, so the
/// next start resumes without asking. One file per server and game.
struct PlayDeviceFile {
    let path: String
    var device: String
    var token: String?
    var character: String?
    /// Why the last session ended, when the server ended it (a takeover, an unclaim): told at
    /// the next start, which would otherwise just ask "Who are you?".
    var sessionEnded: String?

    static func defaultPath(host: String, port: Int, game: String?) -> String {
        let environment = ProcessInfo.processInfo.environment
        // $HOME first, as every Unix tool does: Foundation's home directory comes from the
        // password database and ignores it.
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (home as NSString).appendingPathComponent(".config")
        let safeHost = host.map { $0.isLetter || $0.isNumber || $0 == "." ? $0 : "_" }
        return (base as NSString).appendingPathComponent("bq/play-\(String(safeHost))-\(port)-\(game ?? "default").json")
    }

    /// Device files of the same game kept beside `path` for other server addresses or ports:
    /// a character this device claimed before the organizer moved the server (another port, a
    /// new address from the router) is held by the device saved there.
    static func others(besides path: String, game: String?) -> [String] {
        let directory = (path as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { gameOfFile(named: $0) == game ?? "default" }
            .map { (directory as NSString).appendingPathComponent($0) }
            .filter { $0 != path }
            .sorted()
    }

    /// The game of a default device file's name, `play-HOST-PORT-GAME.json`: the host has no
    /// `-` (`defaultPath` spells it so) and the port is digits, so the game is all after them.
    /// (A suffix would not do: `-lake.json` ends `play-...-big-lake.json` too.)
    static func gameOfFile(named name: String) -> String? {
        guard name.hasPrefix("play-"), name.hasSuffix(".json") else { return nil }
        let parts = name.dropFirst("play-".count).dropLast(".json".count).split(separator: "-", maxSplits: 2,
                                                                                omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[1].isEmpty, parts[1].allSatisfy(\.isNumber) else { return nil }
        return String(parts[2])
    }

    /// Reads the file, or starts a new one with a fresh device id (saved at once). A file that
    /// is there but is not a device file is refused, not replaced: `--device-file` may name
    /// something else of the person's by mistake. Of several first runs at once on one file,
    /// the first to save its device id makes the file, and the others take that id: were the
    /// last to save to win, the character one of them claimed would be held by a device id
    /// that no file keeps.
    /// An empty file or a link to nothing is no device file yet, and is replaced, as it always was.
    static func load(path: String) throws -> PlayDeviceFile {
        var replacing = false
        while true {
            if let file = try loadExisting(path: path) { return file }
            let file = PlayDeviceFile(path: path, device: "dev-" + IdempotencyKey.make(), token: nil, character: nil, sessionEnded: nil)
            if try file.save(replacing: replacing) { return file }
            // Something is at the path: another run's new file, read on the next turn, or (when
            // that finds none) an empty file or a dangling link, replaced on it.
            replacing = true
        }
    }

    private static func loadExisting(path: String) throws -> PlayDeviceFile? {
        if (try? URL(fileURLWithPath: path).resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true {
            throw DeviceFileError("it is a directory; name a file with --device-file")
        }
        if let data = FileManager.default.contents(atPath: path), !data.isEmpty {
            guard let json = try? JSONParser.parse(Array(data)), let device = json["device"]?.stringValue, !device.isEmpty else {
                throw DeviceFileError("it is not a bq device file (no device id in it); name another file with --device-file, or remove this one to start afresh")
            }
            return PlayDeviceFile(path: path, device: device, token: json["token"]?.stringValue,
                                  character: json["character"]?.stringValue, sessionEnded: json["session_ended"]?.stringValue)
        }
        if FileManager.default.fileExists(atPath: path) && !FileManager.default.isReadableFile(atPath: path) {
            throw DeviceFileError("it cannot be read")
        }
        return nil
    }

    /// `replacing: false`: only when there is no file yet; false when there was one.
    @discardableResult
    func save(replacing: Bool = true) throws -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw DeviceFileError("its directory \(directory) cannot be made (is part of that path a file?)")
            }
        }
        var object: [String: JSONValue] = ["device": .string(device)]
        if let token { object["token"] = .string(token) }
        if let character { object["character"] = .string(character) }
        if let sessionEnded { object["session_ended"] = .string(sessionEnded) }
        // The token signs in as this character: readable by this user only, and a crash while
        // saving must not leave half a file (the next start would refuse it).
        // Two bq play on one file (a mistake, but a possible one) must not share a temporary.
        let written = try PrivateFile.write(Data(JSONValue.object(object).serialized().utf8), to: path,
                                            temporarySuffix: ".new-\(getpid())", replacing: replacing)
        removeTemporariesOfEndedProcesses()
        return written
    }

    /// A `bq play` killed while saving leaves its temporary, a token in it: the next save takes
    /// away those whose process is gone (one still running may be saving right now).
    private func removeTemporariesOfEndedProcesses() {
        let directory = (path as NSString).deletingLastPathComponent
        let file = (path as NSString).lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        // The last-seen view's temporaries too (PlayLastSeen.swift): each holds a whole view.
        for prefix in [file + ".new-", file + ".seen.new-"] {
            for name in names where name.hasPrefix(prefix) {
                guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid(), processHasEnded(pid) else { continue }
                removeFile((directory as NSString).appendingPathComponent(name))
            }
        }
    }
}

struct DeviceFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
