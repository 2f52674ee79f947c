import Foundation
import POSIXSupport

/// Keeps a second server off a data directory that one is using. Two servers on one log would
/// each decide commands against their own copy of the game, and the log's compare-and-set
/// would be all that stood between them and a point counted twice or a gift unlocked on a
/// balance already spent. The lock is `flock`, taken on a file in the directory (which also
/// names the holder's process) and on the directory itself (which no one deletes by hand while
/// the server runs, as they might a stray-looking lock file). The kernel drops both when the
/// process ends, however it ends, so a crash never leaves the directory locked. Readers
/// (`bq log`, `bq verify`) take neither: SQLite lets them read beside the server.
final class DataDirectoryLock {
    static let fileName = "serve.lock"

    private var descriptors: [Int32] = []
    /// False where the file system cannot lock a directory (some network and FUSE ones): the
    /// file's lock then stands alone.
    private(set) var holdsDirectory = true

    /// Takes the lock or says who holds it. Confined to the thread that owns the server.
    init(directory: String) throws {
        let path = directory + "/" + Self.fileName
        func busy(_ holder: String) -> ServerError {
            .startup("Another bq serve\(holder) is using the data directory \(directory); stop it first, or give this one another --data")
        }
        let file: Int32
        switch try Self.lock(path, flags: O_RDWR | O_CREAT) {
        case .held(let descriptor): file = descriptor
        case .busy:
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            throw busy(holder.isEmpty ? "" : " (process \(holder))")
        case .unsupported:
            throw ServerError.startup("Cannot lock \(path): the file system does not support locks (flock)")
        }
        descriptors = [file]
        switch try Self.lock(directory, flags: O_RDONLY | O_DIRECTORY) {
        case .held(let whole): descriptors.append(whole)
        case .unsupported: holdsDirectory = false
        case .busy:
            release()
            throw busy(" (whose \(Self.fileName) was deleted)")
        }
        // The holder's process id, for the message above; the lock itself is the flock.
        FileLock.write("\(getpid())\n", to: file)
    }

    private static func lock(_ path: String, flags: Int32) throws -> FileLock {
        do {
            return try FileLock.lockExclusively(path, flags: flags)
        } catch {
            throw ServerError.startup("Cannot \(error)")
        }
    }

    /// Lets the next server in. Idempotent.
    func release() {
        for descriptor in descriptors { FileLock.unlock(descriptor) }
        descriptors = []
    }

    deinit { release() }
}
