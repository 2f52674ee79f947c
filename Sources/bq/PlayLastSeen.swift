import Foundation
import JSON
import POSIXSupport

/// The game as this person was last told it by an open `bq play`, kept beside the device file,
/// so that the next start can tell what changed meanwhile ("Since you were last here:"). It
/// holds only what this person may see, and is readable by its owner only like the token.
final class LastSeenFile: @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    /// The newest version saved by this process: the reader thread and the main thread both
    /// save, and an older view must not overwrite a newer one. Guarded by `lock`.
    private var savedVersion = 0

    init(devicePath: String) {
        path = devicePath + ".seen"
    }

    /// The view saved for `character`, if any: a file left by another character's session is
    /// not theirs to compare with.
    func load(character: String) -> (version: Int, view: JSONValue)? {
        guard let data = FileManager.default.contents(atPath: path), let json = try? JSONParser.parse(Array(data)),
              json["character"]?.stringValue == character, let version = json["version"]?.versionNumber,
              let view = json["view"], view.objectValue != nil else { return nil }
        return (version, view)
    }

    /// Best effort: without the file, the next start shows the game as it is, and no more.
    /// `replacingNewer`: the game went back, and this older view replaces the one saved.
    func save(version: Int, view: JSONValue, replacingNewer: Bool = false) {
        guard let character = view["me"]?["character"]?.stringValue else { return }
        lock.withLock {
            guard version > savedVersion || replacingNewer else { return }
            savedVersion = version
            let object: JSONValue = ["character": .string(character), "version": .int(version), "view": view]
            // Written on the reader thread at every update: no syncs, whose wait would hold the
            // replies back; a file lost at a power cut only leaves the next start's news out.
            _ = try? PrivateFile.write(Data(object.serialized().utf8), to: path, temporarySuffix: ".new-\(getpid())", synced: false)
        }
    }
}
