import Glibc

/// What a log's WAL index (its `-shm` file) said of the WAL when the last connection let go of it.
///
/// SQLite's first connection to a log rebuilds the index from the WAL, keeping the frames up to
/// the last commit it can verify, and says nothing of any it could not: a WAL deleted, cut short
/// or damaged after a crash loses commits silently. Read before that first connection, the index
/// still records how far the WAL reached, and how far a checkpoint had got; read after, what
/// SQLite could read back. The two together tell whether commits were lost.
///
/// The layout is SQLite's (wal.c, "WAL-INDEX FORMAT"), in the host's byte order: two copies of a
/// 48-byte header (the writer updates one, then the other, so copies that differ were caught
/// mid-update and say nothing), then the checkpoint information.
///
/// Threads: any; plain reads of a file, no SQLite call. Memory: the bytes are read into a Swift
/// array, nothing is kept.
package struct WALIndexHeader: Equatable, Sendable {
    /// Frames of the WAL that hold committed pages (`mxFrame`).
    package let frames: UInt32
    /// Of those, the frames a checkpoint has passed (`nBackfill`): it copied into the main file
    /// each page whose newest frame was among them, and skipped the others, whose newer frames
    /// it had not reached. The main file alone then holds a mix of older and newer pages.
    package let copied: UInt32
    /// The WAL's salt, byte for byte as in the WAL's own header: another value means another WAL
    /// (started over after a checkpoint, or another log's).
    package let salt: [UInt8]

    /// The log's page size, which sets a WAL frame's size.
    package let pageSize: Int

    /// Frames whose pages are nowhere but in the WAL.
    package var framesOnlyInWAL: UInt32 { frames > copied ? frames - copied : 0 }

    private static let headerSize = 48
    private static let checkpointInfoOffset = 96
    private static let formatVersion: UInt32 = 3_007_000

    /// The index beside the log at `logPath`; nil when there is none, this process may not read
    /// it, or it holds no complete, settled header.
    package static func read(logPath: String) -> WALIndexHeader? {
        guard let bytes = readPrefix(of: logPath + "-shm", count: checkpointInfoOffset + 4) else { return nil }
        let first = bytes[0..<headerSize], second = bytes[headerSize..<2 * headerSize]
        guard first.elementsEqual(second), word(bytes, at: 0) == formatVersion, bytes[12] == 1 else { return nil }
        // A 16-bit field, in which 65,536 is written as 1.
        let size = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 14, as: UInt16.self)) }
        return WALIndexHeader(frames: word(bytes, at: 16), copied: word(bytes, at: checkpointInfoOffset),
                              salt: Array(bytes[32..<40]), pageSize: size == 1 ? 65_536 : size)
    }

    /// The salt in the header of the WAL beside the log at `logPath`; nil when there is no WAL,
    /// or no WAL header (too short, or not starting with a WAL's magic number).
    package static func walSalt(logPath: String) -> [UInt8]? {
        guard let header = readPrefix(of: logPath + "-wal", count: 32) else { return nil }
        // Big-endian 0x377f0682 or 0x377f0683 (the checksums' byte order).
        guard header[0] == 0x37, header[1] == 0x7F, header[2] == 0x06, header[3] & 0xFE == 0x82 else { return nil }
        return Array(header[16..<24])
    }

    /// Whole frames the WAL beside the log at `logPath` has room for, by its size.
    package func framesInWAL(logPath: String) -> Int {
        var status = stat()
        guard stat(logPath + "-wal", &status) == 0, status.st_size > 32 else { return 0 }
        return Int(status.st_size - 32) / (24 + pageSize)
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
