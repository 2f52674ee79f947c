#if canImport(Glibc)
import Glibc
import POSIXSupport
#endif

/// Reads the few fields the load driver needs straight out of a server line, without building
/// a JSON tree: the driver shares two cores with the server it measures, so every microsecond
/// it spends parsing is one the server does not get.
enum BenchLineScan {
    /// True for a push (`{"push":...`); replies start with `{"id":`.
    static func isPush(_ line: ArraySlice<UInt8>) -> Bool {
        find(Array("\"push\"".utf8), in: line, limit: 16) != nil
    }

    /// The push kind, e.g. "patch", "snapshot", "hello".
    static func pushKind(_ line: ArraySlice<UInt8>) -> String? {
        stringValue(after: Array("\"push\":\"".utf8), in: line, limit: 24)
    }

    /// `"ok":true` near the start of a reply.
    static func isOK(_ line: ArraySlice<UInt8>) -> Bool {
        find(Array("\"ok\":true".utf8), in: line, limit: 64) != nil
    }

    /// The integer after `"key":`, searched in the first `limit` bytes.
    static func intValue(after needle: [UInt8], in line: ArraySlice<UInt8>, limit: Int = 256) -> Int? {
        guard var index = find(needle, in: line, limit: limit) else { return nil }
        index += needle.count
        var value = 0
        var digits = 0
        while index < line.endIndex, line[index] >= 0x30, line[index] <= 0x39 {
            value = value * 10 + Int(line[index] - 0x30)
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The string after a needle ending in `"`, up to the next `"` (no escapes expected).
    static func stringValue(after needle: [UInt8], in line: ArraySlice<UInt8>, limit: Int = 256) -> String? {
        guard var index = find(needle, in: line, limit: limit) else { return nil }
        index += needle.count
        let start = index
        while index < line.endIndex, line[index] != 0x22 { index += 1 }
        return String(decoding: line[start..<index], as: UTF8.self)
    }

    /// Index of the first occurrence of `needle` that starts within the first `limit` bytes.
    static func find(_ needle: [UInt8], in line: ArraySlice<UInt8>, limit: Int) -> Int? {
        guard !needle.isEmpty, line.count >= needle.count else { return nil }
        let lastStart = min(line.endIndex - needle.count, line.startIndex + limit)
        guard lastStart >= line.startIndex else { return nil }
        let first = needle[0]
        var index = line.startIndex
        while index <= lastStart {
            if line[index] == first {
                var matched = true
                var offset = 1
                while offset < needle.count {
                    if line[index + offset] != needle[offset] { matched = false; break }
                    offset += 1
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}

/// Nanoseconds on the monotonic clock.
@inline(__always)
func benchNow() -> UInt64 { monotonicNanoseconds() }
