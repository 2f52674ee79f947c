import Foundation
import Testing
import UV
import POSIXSupport

@Suite("Blocking line socket")
struct BlockingLineSocketTests {
    init() { ignoreSIGPIPE() }

    @Test("readLine times out with no line, strips CRLF, reads long lines, returns a tail, then nil at EOF; hasCompleteLine says when a line is already here")
    func readLineTimeoutLongLinesAndEOF() throws {
        let loop = try EventLoop()
        let longLine = [UInt8](repeating: 0x7A, count: 1 << 20)
        let outcomes = Locked<[String]>([])
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            var received: [UInt8] = []
            connection.onRead = { bytes in
                received += bytes
                guard received == Array("go\n".utf8) else { return }
                connection.write(gathering: [Array("one\r\ntwo\n".utf8), longLine, [0x0A], Array("tail".utf8)])
                connection.closeAfterFlush()
            }
            connection.startReading()
        }
        onNewThread {
            func record(_ outcome: String) { outcomes.withLock { $0.append(outcome) } }
            func describe(_ line: [UInt8]?) -> String {
                guard let line else { return "eof" }
                return line.count > 100 ? "long:\(line.count):\(Set(line))" : "line:" + String(decoding: line, as: UTF8.self)
            }
            do {
                let socket = try BlockingLineSocket(host: "127.0.0.1", port: port)
                do throws(SocketError) {
                    _ = try socket.readLine(timeoutMilliseconds: 50)
                    record("no timeout")
                } catch {
                    record(error.kind == .timedOut ? "timeout" : "\(error)")
                }
                try socket.sendLine("go")
                for _ in 0..<6 {
                    record(describe(try socket.readLine(timeoutMilliseconds: 10_000)))
                    if socket.hasCompleteLine { record("more") }
                }
                socket.close()
                record("closed:\(socket.isClosed)")
                do throws(SocketError) {
                    try socket.sendLine("after close")
                    record("sent after close")
                } catch {
                    record(error.kind == .closed ? "send refused" : "\(error)")
                }
            } catch {
                record("error: \(error)")
            }
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        #expect(outcomes.withLock { $0 } == [
            // "two" came in the read that brought "one"; no read has ended the long line yet,
            // and an unterminated tail is not a line.
            "timeout", "line:one", "more", "line:two", "long:\(1 << 20):[122]", "line:tail", "eof", "eof",
            "closed:true", "send refused",
        ])
    }

    @Test("a line longer than the bound is refused, not gathered without end")
    func overlongLine() throws {
        let loop = try EventLoop()
        let outcomes = Locked<[String]>([])
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            connection.write(gathering: [Array("short\n".utf8), [UInt8](repeating: 0x7A, count: 300_000)])
            connection.closeAfterFlush()
            connection.startReading()
        }
        onNewThread {
            func record(_ outcome: String) { outcomes.withLock { $0.append(outcome) } }
            do {
                let socket = try BlockingLineSocket(host: "127.0.0.1", port: port, maxLineBytes: 100_000)
                record(String(decoding: try socket.readLine(timeoutMilliseconds: 10_000) ?? [], as: UTF8.self))
                do throws(SocketError) {
                    _ = try socket.readLine(timeoutMilliseconds: 10_000)
                    record("read it")
                } catch {
                    record(error.kind == .lineTooLong ? "too long" : "\(error)")
                }
                socket.close()
            } catch {
                record("error: \(error)")
            }
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        #expect(outcomes.withLock { $0 } == ["short", "too long"])
    }

    @Test("connecting to a port nobody listens on fails with ECONNREFUSED")
    func connectRefused() throws {
        // Bind and release a port so that (almost certainly) nothing listens on it.
        let loop = try EventLoop()
        let server = try TCPServer(loop: loop, host: "127.0.0.1", port: 0) { _ in }
        let port = server.localPort
        server.close()
        expectLoopClosesCleanly(loop)
        let error = #expect(throws: SocketError.self) {
            _ = try BlockingLineSocket(host: "127.0.0.1", port: port, connectTimeoutMilliseconds: 2000)
        }
        #expect(error?.kind == .system(errno: ECONNREFUSED))
    }
}
