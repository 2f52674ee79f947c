import Foundation

/// Why `PrivateFile.write` failed, said for a person: which file, and what the system said.
public struct PrivateFileError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}

/// Files that hold secrets (the admin key, a device's token): written whole, for their owner only.
public enum PrivateFile {
    /// Writes a file that only its owner may read, whole or not at all: the bytes go to a file
    /// created 0600 beside it, are synced, and take the name by a rename. (FileManager's atomic
    /// write creates its file with the umask's mode and narrows it after the rename: a process
    /// killed in between leaves the key readable by everyone.) `temporarySuffix` names the file
    /// beside it: a writer that holds no lock on the directory gives one of its own, so that two
    /// processes writing the same file never share it.
    /// `synced: false` skips both syncs, for a file whose loss at a power cut costs nothing.
    /// `replacing: false` writes only a file that is not there yet (the name is taken by a link,
    /// which an existing file makes fail): false when another was there, which is left as found.
    /// A file system without hard links (FAT, some network shares) cannot tell: there the file is
    /// written as with `replacing`.
    @discardableResult
    public static func write(_ data: Data, to path: String, temporarySuffix: String = ".new", synced: Bool = true,
                             replacing: Bool = true) throws(PrivateFileError) -> Bool {
        let temporary = path + temporarySuffix
        unlink(temporary)  // left by a writer that was killed while writing
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PrivateFileError("Cannot create \(temporary): \(systemErrorText(errno))")
        }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try file.write(contentsOf: data)
            if synced { try file.synchronize() }
        } catch {
            unlink(temporary)
            throw PrivateFileError("Cannot write \(temporary): \(error.localizedDescription)")
        }
        if replacing {
            guard rename(temporary, path) == 0 else {
                let reason = systemErrorText(errno)
                unlink(temporary)
                throw PrivateFileError("Cannot rename \(temporary) to \(path): \(reason)")
            }
        } else if link(temporary, path) == 0 {
            unlink(temporary)
        } else {
            let reason = errno
            guard reason != EEXIST else {
                unlink(temporary)
                return false
            }
            guard rename(temporary, path) == 0 else {
                let renameReason = systemErrorText(errno)
                unlink(temporary)
                throw PrivateFileError("Cannot link or rename \(temporary) to \(path): \(systemErrorText(reason)), then \(renameReason)")
            }
        }
        guard synced else { return true }
        // The new name is durable once its directory is synced: without it a power cut could
        // take the file away after the key was handed out, and the next start would make
        // another. Best effort: a directory that cannot be opened was just written to.
        let parent = (path as NSString).deletingLastPathComponent
        let directory = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
        return true
    }
}
