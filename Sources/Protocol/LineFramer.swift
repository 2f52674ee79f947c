/// One result of `LineFramer.feed`.
public enum FramedLine: Sendable, Equatable {
    /// A complete, non-blank line without its `\n` and without one trailing `\r`.
    case line([UInt8])
    /// A line whose content exceeded the limit; reported once, its bytes were dropped.
    case tooLong
}

/// Splits a TCP byte stream into NDJSON lines with bounded memory.
///
/// Lines end at `\n`; one `\r` before it is stripped; blank lines (empty or a lone `\r`) are
/// skipped. A line whose content grows past `maxLineBytes` produces exactly one `.tooLong`, as
/// soon as that is certain, and everything up to its `\n` is discarded without being stored.
/// The framer never holds more than `maxLineBytes + 1` bytes (the `+ 1` is a possible `\r`
/// that is only known to be a line ending once the `\n` arrives).
public struct LineFramer: Sendable {
    /// The largest accepted line content in bytes, excluding `\r\n`.
    public let maxLineBytes: Int
    /// Bytes of the unfinished line held so far.
    public var bufferedByteCount: Int { pending.count }

    private var pending: [UInt8] = []
    /// Inside an over-long line that was already reported: drop bytes until the next `\n`.
    private var discarding = false

    public init(maxLineBytes: Int) {
        precondition(maxLineBytes >= 0, "maxLineBytes must not be negative")
        self.maxLineBytes = maxLineBytes
    }

    /// Consumes `bytes` and returns the lines they complete, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [FramedLine] {
        feed(Array(bytes))
    }

    /// The same for a read buffer, without a copy.
    public mutating func feed(_ bytes: [UInt8]) -> [FramedLine] {
        var output: [FramedLine] = []
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let chunk = bytes[start..<end]
            let foundNewline = end < bytes.count

            if discarding {
                if foundNewline { discarding = false }
            } else if pending.count + chunk.count > maxLineBytes + 1 {
                // Even with a trailing `\r` stripped the content is too long.
                output.append(.tooLong)
                pending.removeAll(keepingCapacity: false)
                discarding = !foundNewline
            } else if foundNewline {
                pending.append(contentsOf: chunk)
                finishLine(into: &output)
            } else {
                pending.append(contentsOf: chunk)
            }
            start = end + 1
        }
        return output
    }

    /// Empty, or only JSON's insignificant whitespace (space, tab, carriage return): a line a
    /// person or a script can send by accident, which is not a request.
    private static func isBlank(_ line: [UInt8]) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    private mutating func finishLine(into output: inout [FramedLine]) {
        if pending.last == 0x0D { pending.removeLast() }
        if pending.count > maxLineBytes {
            output.append(.tooLong)
        } else if !Self.isBlank(pending) {
            // An exact-size copy: the emitted line must not pin `pending`'s capacity, and
            // `pending` stays uniquely owned so its storage is reused for the next line.
            output.append(.line(Array(pending)))
        }
        pending.removeAll(keepingCapacity: true)
    }
}
