import Foundation
import JSON
import POSIXSupport
import Testing

/// The loop thread is shared turn by turn: one connection's costly lines (a script pipelining
/// `events` pages while reading every answer) get a share of each loop turn, and everyone
/// else is served in between, rather than after the whole pipeline.
@Suite struct LoopShareTests {
    @Test func aChangeIsMadeWhileAnotherConnectionPipelinesCostlyReads() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let script = try server.connect()
        try script.signInAsAdmin()
        // 1,000 events more, so that every page asked for below is a full one.
        let fill = (1...1000).map { PipeliningTests.line(100_000 + $0, "adjust_points", ["delta": 1, "reason": "fill"]) }
        try script.sendRaw(Array(fill.joined().utf8))
        for _ in 1...1000 { _ = try script.socket.readLine(timeoutMilliseconds: 30_000) }
        let filled = try script.currentVersion()

        // The script reads every answer as it comes, as a fast reader would: nothing the
        // server writes waits, so nothing of its own stops it starting the next page.
        let pages = 200
        let drained = DrainedLines(socket: script.socket, count: pages)
        let reads = (1...pages).map { PipeliningTests.line(200_000 + $0, "events", ["after": .int(filled - 1000), "limit": 1000]) }
        try script.sendRaw(Array(reads.joined().utf8))

        // Sent once the whole pipeline is on its way: a player connecting and making a change.
        let player = try server.connect()
        try player.signInAsAdmin()
        let made = try player.ok("adjust_points", ["delta": 5, "reason": "karaoke"])

        let last = try drained.waitForLast()
        let lastPage = try JSONParser.parse(last)
        #expect(lastPage["result"]?["events"]?.arrayValue?.count == 1000)
        // The pages started after the change read a log that holds it.
        #expect(lastPage.versionNumber >= made.versionNumber,
                "the change (version \(made.versionNumber)) waited for all \(pages) pages (the last at \(lastPage.versionNumber))")
    }
}

/// Reads `count` lines from `socket` on a thread of its own, keeping the last.
private final class DrainedLines: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Written by the reading thread before `done` is signalled, read after.
    private var outcome: Result<[UInt8], HarnessError> = .failure(HarnessError("not read"))

    init(socket: BlockingLineSocket, count: Int) {
        let thread = Thread { [self] in
            var last: [UInt8] = []
            do {
                for index in 1...count {
                    guard let line = try socket.readLine(timeoutMilliseconds: 60_000) else {
                        throw HarnessError("EOF after \(index - 1) of \(count) lines")
                    }
                    last = line
                }
                outcome = .success(last)
            } catch {
                outcome = .failure(error as? HarnessError ?? HarnessError("\(error)"))
            }
            done.signal()
        }
        thread.start()
    }

    func waitForLast() throws -> [UInt8] {
        done.wait()
        return try outcome.get()
    }
}
