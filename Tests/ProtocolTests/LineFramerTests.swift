import Protocol
import Testing

/// The reference behaviour: the standard library's split, minus one `\r` and blank lines (empty,
/// or only spaces, tabs and carriage returns).
/// Only complete lines count, so bytes after the last `\n` are left out.
private func expectedLines(_ input: [UInt8], maxLineBytes: Int) -> [FramedLine] {
    let complete = input[..<(input.lastIndex(of: 0x0A) ?? 0)]
    return complete.split(separator: 0x0A, omittingEmptySubsequences: false).compactMap { raw in
        var line = Array(raw)
        if line.last == 0x0D { line.removeLast() }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
        return line.count > maxLineBytes ? .tooLong : .line(line)
    }
}

private func frame(_ input: [UInt8], chunkSize: Int, maxLineBytes: Int) -> (lines: [FramedLine], maxBuffered: Int) {
    var framer = LineFramer(maxLineBytes: maxLineBytes)
    var lines: [FramedLine] = []
    var maxBuffered = 0
    var start = 0
    while start < input.count {
        let end = min(start + chunkSize, input.count)
        lines += framer.feed(input[start..<end])
        maxBuffered = max(maxBuffered, framer.bufferedByteCount)
        start = end
    }
    return (lines, maxBuffered)
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite struct LineFramerTests {
    static let inputs: [String] = [
        "{\"op\":\"hello\"}\n",
        "a\nbb\nccc\n",
        "a\r\nbb\r\n\r\n\n\nccc\r\n",
        "\n\n\r\n\r\n",
        "no newline at all",
        "x\n partial tail",
        "\r\r\n\r\nz\r\r\n",
        "héllo wörld 😀\n\u{0}\u{1}\n",
        "short\n" + String(repeating: "L", count: 40) + "\nok\n" + String(repeating: "M", count: 17) + "\r\nend\n",
        String(repeating: "0123456789abcdef\n", count: 6) + String(repeating: "y", count: 16) + "\r\n",
    ]

    @Test(arguments: inputs)
    func matchesStandardSplitForEveryChunkSize(_ text: String) {
        let input = bytes(text)
        let limit = 16
        let expected = expectedLines(input, maxLineBytes: limit)
        for chunkSize in 1...max(1, input.count) {
            let (lines, maxBuffered) = frame(input, chunkSize: chunkSize, maxLineBytes: limit)
            #expect(lines == expected, "chunk size \(chunkSize)")
            #expect(maxBuffered <= limit + 1, "chunk size \(chunkSize)")
        }
    }

    @Test func crlfAndBlankLines() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.feed(bytes("a\r\n\r\n\n b \r\n")) == [.line(bytes("a")), .line(bytes(" b "))])
        // Only one `\r` is stripped; a lone `\r` elsewhere is content.
        #expect(framer.feed(bytes("c\r\r\n\rd\n")) == [.line(bytes("c\r")), .line(bytes("\rd"))])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func linesOfOnlyWhitespaceAreBlank() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.feed(bytes("  \n\t\r\n \t \r\r\n{}\n \u{0B}\n")) == [.line(bytes("{}")), .line(bytes(" \u{0B}"))])
    }

    @Test func partialLineIsHeldUntilItsNewline() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.feed(bytes("{\"a\":")) == [])
        #expect(framer.bufferedByteCount == 5)
        #expect(framer.feed(bytes("1}\r")) == [])
        #expect(framer.feed(bytes("\n{")) == [.line(bytes("{\"a\":1}"))])
        #expect(framer.bufferedByteCount == 1)
    }

    @Test func limitIsOnContentNotOnLineEnding() {
        var framer = LineFramer(maxLineBytes: 3)
        #expect(framer.feed(bytes("abc\r\n")) == [.line(bytes("abc"))])
        #expect(framer.feed(bytes("abc\n")) == [.line(bytes("abc"))])
        #expect(framer.feed(bytes("abcd\n")) == [.tooLong])
        #expect(framer.feed(bytes("abc\r\r\n")) == [.tooLong])
        #expect(framer.feed(bytes("ab\n")) == [.line(bytes("ab"))])
    }

    @Test func overLongLineSplitAcrossChunksIsReportedOnce() {
        var framer = LineFramer(maxLineBytes: 4)
        #expect(framer.feed(bytes("ok\nabc")) == [.line(bytes("ok"))])
        #expect(framer.feed(bytes("de")) == [])
        // Reported as soon as it is certain, before the newline arrives.
        #expect(framer.feed(bytes("f")) == [.tooLong])
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.feed(bytes("ghij")) == [])
        #expect(framer.feed(bytes("klm\r")) == [])
        #expect(framer.feed(bytes("\nnext\n")) == [.line(bytes("next"))])
        #expect(framer.feed(bytes("xxxxxxx\nyy\nzzzzzzzzz")) == [.tooLong, .line(bytes("yy")), .tooLong])
        #expect(framer.feed(bytes("zz\nw\n")) == [.line(bytes("w"))])
    }

    @Test func discardingTenMegabyteLineKeepsMemoryBounded() {
        let limit = 64 * 1024
        var framer = LineFramer(maxLineBytes: limit)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024 + 7)
        var results = framer.feed(bytes("{\"before\":1}\n"))
        var fed = 0
        while fed < 10 * 1024 * 1024 {
            results += framer.feed(chunk)
            #expect(framer.bufferedByteCount <= limit + 1)
            fed += chunk.count
        }
        results += framer.feed(bytes("tail\n{\"after\":2}\n"))
        #expect(results == [.line(bytes("{\"before\":1}")), .tooLong, .line(bytes("{\"after\":2}"))])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func zeroLimitRejectsEveryNonBlankLine() {
        var framer = LineFramer(maxLineBytes: 0)
        #expect(framer.feed(bytes("\r\n\na\n\r\n")) == [.tooLong])
    }

    @Test func acceptsNonContiguousCollections() {
        var framer = LineFramer(maxLineBytes: 10)
        #expect(framer.feed(bytes("a\nb\n").lazy.map { $0 }) == [.line(bytes("a")), .line(bytes("b"))])
    }
}
