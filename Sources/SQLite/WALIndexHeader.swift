import Glibc

/// What a log's WAL index (its `-shm` file) said of the WAL when the last connection let go of it.
///
/// SQLite's first connection to a log rebuilds the index from the WAL, keeping the frames up to
/// the last commit it can verify, and says nothing of any it could not: a WAL deleted, cut short
/// or damaged after a crash loses commits silently. Read before any connection opens the log,
/// the index still records how far the WAL reached and how far a checkpoint had got; with the
/// WAL's own size and header, that tells whether commits were lost.
///
/// The layout is SQLite's (wal.c, "WAL-INDEX FORMAT"), in the host's byte order: two copies of a
/// 48-byte header (the writer updates one, then the other, so copies that differ were caught
/// mid-update and say nothing), then the checkpoint information.
///
/// Threads: any; plain reads of files, no SQLite call. Memory: the bytes are read into Swift
/// arrays, nothing is kept. Never read while this process has a connection to the log: closing
/// the descriptor these reads open drops every lock the process holds on the file, SQLite's own.
package struct WALIndexHeader: Equatable, Sendable {
    /// Frames of the WAL that hold committed pages (`mxFrame`).
    package let frames: UInt32
    /// Of those, the frames a checkpoint has passed (`nBackfill`, set once the main file is
    /// synced, after the WAL was: a power cut never leaves the WAL shorter). A checkpoint copies
    /// into the main file each page whose newest frame is among them, and skips the others,
    /// whose newer frames it has not reached: the main file alone then holds a mix of older and
    /// newer pages.
    package let copied: UInt32
    /// Whether a checkpoint may have begun copying, even if it never finished
    /// (`nBackfillAttempted`, set before the copy; a rebuild of the index sets it to every
    /// frame, and `nBackfill` to 0, not knowing): the main file alone may then be such a mix.
    package let copyMayHaveBegun: Bool
    /// The WAL's salt, byte for byte as in the WAL's own header: another value means another WAL
    /// (started over after a checkpoint, or another log's).
    package let salt: [UInt8]
    /// The log's page size, which sets a WAL frame's size.
    package let pageSize: Int

    /// Frames whose pages are nowhere but in the WAL.
    package var framesOnlyInWAL: UInt32 { frames - copied }

    private static let headerSize = 48
    private static let checkpointInfoOffset = 96
    private static let attemptedOffset = 128
    private static let formatVersion: UInt32 = 3_007_000

    /// The index beside the log at `logPath`; nil when there is none, this process may not read
    /// it, or it holds no complete, settled header SQLite wrote.
    package static func read(logPath: String) -> WALIndexHeader? {
        guard let bytes = readPrefix(of: logPath + "-shm", count: attemptedOffset + 4) else { return nil }
        let first = bytes[0..<headerSize], second = bytes[headerSize..<2 * headerSize]
        guard first.elementsEqual(second), word(bytes, at: 0) == formatVersion, bytes[12] == 1 else { return nil }
        let frames = word(bytes, at: 16)
        let copied = word(bytes, at: checkpointInfoOffset), attempted = word(bytes, at: attemptedOffset)
        guard copied <= frames else { return nil }
        // A 16-bit field, in which 65,536 is written as 1.
        let size = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 14, as: UInt16.self)) }
        return WALIndexHeader(frames: frames, copied: copied, copyMayHaveBegun: copied > 0 || attempted > 0,
                              salt: Array(bytes[32..<40]), pageSize: size == 1 ? 65_536 : size)
    }

    /// What the header of the WAL beside a log is.
    package enum WALHeader: Equatable, Sendable {
        /// No WAL file.
        case missing
        /// An empty one: SQLite empties a WAL it has copied whole (`TRUNCATE`), and after a
        /// power cut the index on disk may be older than that.
        case empty
        /// Not a header SQLite reads frames after: too short, not its magic number or format, or
        /// another page size than the index's.
        case unreadable
        /// A header SQLite reads, with its salt.
        case salt([UInt8])
    }

    /// The header of the WAL beside the log at `logPath`, judged as SQLite would for this index.
    package func walHeader(logPath: String) -> WALHeader {
        guard let size = Self.fileSize(logPath + "-wal") else { return .missing }
        guard size > 0 else { return .empty }
        guard let header = Self.readPrefix(of: logPath + "-wal", count: 32) else { return .unreadable }
        func bigEndian(_ offset: Int) -> Int { header[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        // 0x377f0682 or 0x377f0683 (the checksums' byte order).
        guard bigEndian(0) & ~1 == 0x377F_0682, bigEndian(4) == Int(Self.formatVersion), bigEndian(8) == pageSize else {
            return .unreadable
        }
        return .salt(Array(header[16..<24]))
    }

    /// Whole frames the WAL beside the log at `logPath` has room for, by its size.
    package func framesInWAL(logPath: String) -> Int {
        guard let size = Self.fileSize(logPath + "-wal"), size > 32 else { return 0 }
        return (size - 32) / (24 + pageSize)
    }

    private static func fileSize(_ path: String) -> Int? {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : nil
    }

    /// A 32-bit word in the host's byte order, as SQLite writes the index.
    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }

    /// The first `count` bytes of the file; nil when it cannot be read or is shorter.
    private static func readPrefix(of path: String, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(filled)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            filled += got
        }
        return bytes
    }
}
