import Client
import Foundation
import JSON

/// What `bq play` keeps between runs: the device id (made once) and the session token, so the
/// next start resumes without asking. One file per server and game.
struct PlayDeviceFile {
    let path: String
    var device: String
    var token: String?
    var character: String?

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

    /// Reads the file, or starts a new one with a fresh device id (saved at once).
    static func load(path: String) throws -> PlayDeviceFile {
        if let data = FileManager.default.contents(atPath: path),
           let json = try? JSONParser.parse(Array(data)), let device = json["device"]?.stringValue {
            return PlayDeviceFile(path: path, device: device, token: json["token"]?.stringValue,
                                  character: json["character"]?.stringValue)
        }
        let file = PlayDeviceFile(path: path, device: "dev-" + IdempotencyKey.make(), token: nil, character: nil)
        try file.save()
        return file
    }

    func save() throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        var object: [String: JSONValue] = ["device": .string(device)]
        if let token { object["token"] = .string(token) }
        if let character { object["character"] = .string(character) }
        // The token signs in as this character: readable by this user only.
        guard FileManager.default.createFile(atPath: path, contents: Data(JSONValue.object(object).serialized().utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
