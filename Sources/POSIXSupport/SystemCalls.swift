import Glibc

// Small system calls for the targets that build with strict memory safety. Each runs on its
// caller's thread, blocks it for the call only, and keeps no pointer past its return: what it
// hands the kernel (a path's C string, a struct to fill, a buffer to write) is borrowed for
// the one call.

/// A system call that failed: which, on what, and `errno`.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    public var description: String { "\(operation): \(systemErrorText(code))" }
}

/// What `strerror` says of an error number ("No such file or directory").
public func systemErrorText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// CLOCK_MONOTONIC in nanoseconds: for measuring, never for dates.
public func monotonicNanoseconds() -> UInt64 {
    nanoseconds(of: CLOCK_MONOTONIC)
}

/// `monotonicNanoseconds()` `seconds` from now; a negative or NaN wait is none, and one past
/// about 30 years (an infinite timeout) is that long.
public func monotonicDeadline(after seconds: Double) -> UInt64 {
    monotonicNanoseconds() + UInt64((seconds > 0 ? min(seconds, 1e9) : 0) * 1e9)
}

/// CLOCK_BOOTTIME in nanoseconds: like the monotonic clock, it never jumps, but it also counts
/// the time the machine was suspended (a laptop's lid closed).
public func bootTimeNanoseconds() -> UInt64 {
    nanoseconds(of: CLOCK_BOOTTIME)
}

private func nanoseconds(of clock: clockid_t) -> UInt64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// User plus system CPU seconds this process has used so far.
public func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Bytes an unprivileged user may still write on the file system holding `path`; nil when
/// `statvfs` cannot say.
public func availableBytes(at path: String) -> UInt64? {
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return nil }
    return UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
}

/// Creates an empty file with `mode` in one step, so that it never exists with another mode:
/// true when made, false when something was already there.
public func createEmptyFile(_ path: String, mode: mode_t) throws(SystemError) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    if descriptor >= 0 {
        close(descriptor)
        return true
    }
    if errno == EEXIST { return false }
    throw SystemError(code: errno, operation: "create \(path)")
}

/// Gives the file at `path` the name `newPath` too, unless that name is taken (false then): the
/// way to put a finished file under its final name without replacing one made meanwhile. On a
/// file system without hard links the file is renamed instead, the name checked just before.
public func placeFile(_ path: String, at newPath: String) throws(SystemError) -> Bool {
    if link(path, newPath) == 0 { return true }
    if errno == EEXIST { return false }
    guard errno == EPERM || errno == EOPNOTSUPP else { throw SystemError(code: errno, operation: "link \(path) to \(newPath)") }
    if access(newPath, F_OK) == 0 { return false }
    guard rename(path, newPath) == 0 else { throw SystemError(code: errno, operation: "rename \(path) to \(newPath)") }
    return true
}

/// Writes the file's data, and the directory entries of `directory`, through to the disk.
public func syncToDisk(file path: String, directory: String) throws(SystemError) {
    for (target, flags) in [(path, O_RDONLY), (directory, O_RDONLY | O_DIRECTORY)] {
        let descriptor = open(target, flags | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError(code: errno, operation: "open \(target)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemError(code: errno, operation: "fsync \(target)") }
    }
}

/// Removes a file; whether it was there or not.
public func removeFile(_ path: String) {
    unlink(path)
}

/// Whether the process `pid` is gone (signalling it would find no such process).
public func processHasEnded(_ pid: Int32) -> Bool {
    kill(pid, 0) != 0 && errno == ESRCH
}

/// The outcome of `lockExclusively`.
public enum FileLock: Sendable, Equatable {
    /// An open descriptor of the path, with an exclusive `flock` on it until it is closed (by
    /// `unlock`, or by the kernel when the process ends, however it ends).
    case held(Int32)
    /// Another process holds the lock.
    case busy
    /// The file system does not lock this.
    case unsupported

    /// Takes an exclusive `flock` on `path` without waiting, opening it with `flags` (add
    /// `O_CREAT` to make a file, `O_DIRECTORY` for a directory).
    public static func lockExclusively(_ path: String, flags: Int32) throws(SystemError) -> FileLock {
        let descriptor = open(path, flags | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SystemError(code: errno, operation: "open \(path)") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            close(descriptor)
            switch reason {
            case EWOULDBLOCK: return .busy
            case ENOTSUP, EINVAL, ENOLCK: return .unsupported
            default: throw SystemError(code: reason, operation: "lock \(path)")
            }
        }
        return .held(descriptor)
    }

    /// Replaces the locked file's contents with `text` (the holder's process id, say).
    public static func write(_ text: String, to descriptor: Int32) {
        ftruncate(descriptor, 0)
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    /// Gives a held lock back.
    public static func unlock(_ descriptor: Int32) {
        close(descriptor)
    }
}

/// Why `path` cannot be read, as `strerror` says it; nil when it can.
public func readabilityError(of path: String) -> String? {
    access(path, R_OK) == 0 ? nil : systemErrorText(errno)
}
