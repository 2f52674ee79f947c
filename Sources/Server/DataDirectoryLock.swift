import Foundation

/// Keeps a second server off a data directory that one is using. Two servers on one log would
/// each decide commands against their own copy of the game, and the log's compare-and-set
/// would be all that stood between them and a point counted twice or a gift unlocked on a
/// balance already spent. The lock is `flock` on a file in the directory: the kernel drops it
/// when the process ends, however it ends, so a crash never leaves the directory locked.
/// Readers (`bq log`, `bq verify`) do not take it: SQLite lets them read beside the server.
final class DataDirectoryLock {
    static let fileName = "serve.lock"

    private var descriptor: Int32

    /// Takes the lock or says who holds it. Confined to the thread that owns the server.
    init(directory: String) throws {
        let path = directory + "/" + Self.fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ServerError.startup("Cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw ServerError.startup("Cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            throw ServerError.startup("Another bq serve\(holder.isEmpty ? "" : " (process \(holder))") is using the data "
                + "directory \(directory); stop it first, or give this one another --data")
        }
        self.descriptor = descriptor
        // The holder's process id, for the message above; the lock itself is the flock.
        ftruncate(descriptor, 0)
        try? FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: Data("\(getpid())\n".utf8))
    }

    /// Lets the next server in. Idempotent.
    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
