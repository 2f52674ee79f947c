import Foundation
import Testing
import UV
import POSIXSupport

@Suite("TCP server and connections")
struct TCPTests {
    init() { ignoreSIGPIPE() }

    /// libuv sets only the idle time; Linux's own interval and count would keep a vanished peer's
    /// connection for another 11 minutes.
    @Test("keepalive probes an idle peer on the interval and count asked for")
    func keepAliveTiming() throws {
        let loop = try EventLoop()
        var seen: [(idleSeconds: Int32, intervalSeconds: Int32, probes: Int32)?] = []
        var server: TCPServer?
        server = try TCPServer(loop: loop, host: "127.0.0.1", port: 0) { connection in
            seen.append(connection.keepAlive)
            connection.setKeepAlive(idleSeconds: 60)
            seen.append(connection.keepAlive)
            connection.setKeepAlive(idleSeconds: 30, intervalSeconds: 5, probes: 3)
            seen.append(connection.keepAlive)
            connection.close()
            server?.close()
        }
        let port = try #require(server?.localPort)
        TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
            if case .success(let connection) = result { connection.close() }
        }
        expectLoopClosesCleanly(loop)
        try #require(seen.count == 3)
        #expect(seen[0] == nil, "off until asked for")
        #expect(seen[1].map { [$0.idleSeconds, $0.intervalSeconds, $0.probes] } == [60, 10, 6])
        #expect(seen[2].map { [$0.idleSeconds, $0.intervalSeconds, $0.probes] } == [30, 5, 3])
    }

    @Test("a server echoes lines to N clients; every connection closes once on each side")
    func echoWithSeveralClients() throws {
        let loop = try EventLoop()
        let clients = 8
        var accepted = 0
        var serverSideCloses = 0
        var clientSideCloses = 0
        var replies: [String] = []
        var server: TCPServer?
        server = try TCPServer(loop: loop, host: "127.0.0.1", port: 0) { connection in
            accepted += 1
            #expect(connection.peerDescription.hasPrefix("127.0.0.1:"))
            connection.onRead = { bytes in connection.write(bytes) }
            connection.onClose = { error in
                #expect(error == nil)
                serverSideCloses += 1
                if serverSideCloses == clients { server?.close() }
            }
            connection.startReading()
        }
        let port = try #require(server?.localPort)
        #expect(port > 0)
        for client in 0..<clients {
            TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
                guard case .success(let connection) = result else {
                    Issue.record("connect failed: \(result)")
                    return
                }
                var received: [UInt8] = []
                connection.onRead = { bytes in
                    received += bytes
                    if received.last == 0x0A {
                        replies.append(String(decoding: received.dropLast(), as: UTF8.self))
                        connection.close()
                    }
                }
                connection.onClose = { error in
                    #expect(error == nil)
                    clientSideCloses += 1
                }
                connection.setNoDelay(true)
                connection.startReading()
                connection.write(gathering: [Array("hello ".utf8), Array("\(client)".utf8), [0x0A]])
            }
        }
        expectLoopClosesCleanly(loop)
        #expect(accepted == clients)
        #expect(serverSideCloses == clients)
        #expect(clientSideCloses == clients)
        #expect(replies.sorted() == (0..<clients).map { "hello \($0)" }.sorted())
    }

    @Test("IPv6 literals work for both the listener and the client")
    func ipv6Loopback() throws {
        let loop = try EventLoop()
        var peers: [String] = []
        var reply: [UInt8] = []
        var server: TCPServer?
        server = try TCPServer(loop: loop, host: "::1", port: 0) { connection in
            peers.append(connection.peerDescription)
            connection.onRead = { connection.write($0) }
            connection.onClose = { _ in server?.close() }
            connection.startReading()
        }
        let port = try #require(server?.localPort)
        TCPConnection.connect(loop: loop, host: "::1", port: port) { result in
            guard let client = try? result.get() else {
                Issue.record("connect failed: \(result)")
                server?.close()
                return
            }
            peers.append(client.peerDescription)
            client.onRead = { bytes in
                reply += bytes
                if reply.last == 0x0A { client.close() }
            }
            client.startReading()
            client.write(Array("ping\n".utf8))
        }
        expectLoopClosesCleanly(loop)
        #expect(reply == Array("ping\n".utf8))
        #expect(peers.count == 2)
        #expect(peers.allSatisfy { $0.hasPrefix("[::1]:") })
        #expect(peers.last == "[::1]:\(port)")
    }

    @Test("binding a port in use throws EADDRINUSE naming the call and the address")
    func bindingUsedPortThrows() throws {
        let loop = try EventLoop()
        let first = try TCPServer(loop: loop, host: "127.0.0.1", port: 0) { _ in }
        let error = #expect(throws: UVError.self) {
            _ = try TCPServer(loop: loop, host: "127.0.0.1", port: first.localPort) { _ in }
        }
        #expect(error?.name == "EADDRINUSE")
        #expect(error?.description == "uv_tcp_bind 127.0.0.1:\(first.localPort): address already in use (EADDRINUSE)")
        var closed = 0
        first.close { closed += 1 }
        first.close { closed += 100 }
        expectLoopClosesCleanly(loop)
        #expect(closed == 1)
    }

    @Test("a host that is neither an IP literal nor a host name throws instead of binding")
    func badHostThrows() throws {
        let loop = try EventLoop()
        let error = #expect(throws: UVError.self) {
            _ = try TCPServer(loop: loop, host: "not an address", port: 0) { _ in }
        }
        #expect(error?.description.contains("not an IP address") == true)
        expectLoopClosesCleanly(loop)
    }

    @Test("close() with pending writes: each write completes with ECANCELED, then onClose once")
    func closeWithPendingWrites() throws {
        let loop = try EventLoop()
        let chunk = [UInt8](repeating: 0x61, count: 8 << 20)
        var results: [UVError?] = []
        var closes = 0
        var serverSideClosed = false
        var client: TCPConnection?
        var server: TCPServer?
        server = try TCPServer(loop: loop, host: "127.0.0.1", port: 0) { connection in
            connection.onClose = { error in
                closes += 1
                #expect(error == nil)
                #expect(results.count == 4, "write callbacks run before the close callback")
                serverSideClosed = true
                client?.close()
                server?.close()
            }
            for _ in 0..<4 { connection.write(chunk) { results.append($0) } }
            #expect(connection.queuedWriteBytes == 4 * chunk.count)
            connection.close()
            connection.close()
            connection.write(chunk) { _ in Issue.record("a write after close must be ignored") }
        }
        let port = try #require(server?.localPort)
        TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
            // Never reads, so the writes above cannot finish.
            client = try? result.get()
            if serverSideClosed { client?.close() }
        }
        expectLoopClosesCleanly(loop)
        #expect(closes == 1)
        #expect(results.count == 4)
        #expect(results.allSatisfy { $0?.isCancelled == true })
    }

    @Test("a client that disconnects mid-write: writes fail, onClose gets the error once")
    func peerDisconnectsMidWrite() throws {
        let loop = try EventLoop()
        let chunk = [UInt8](repeating: 0x62, count: 8 << 20)
        var results: [UVError?] = []
        var closeErrors: [UVError?] = []
        var server: TCPServer?
        server = try TCPServer(loop: loop, host: "127.0.0.1", port: 0) { connection in
            connection.onClose = { error in
                closeErrors.append(error)
                server?.close()
            }
            for _ in 0..<4 { connection.write(chunk) { results.append($0) } }
        }
        let port = try #require(server?.localPort)
        TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
            guard let client = try? result.get() else {
                Issue.record("connect failed: \(result)")
                return
            }
            // Hang up after the first bytes, leaving unread data: the server's writes break.
            client.onRead = { _ in client.close() }
            client.startReading()
        }
        expectLoopClosesCleanly(loop)
        #expect(closeErrors.count == 1)
        let error = try #require(closeErrors.first ?? nil)
        #expect(["EPIPE", "ECONNRESET"].contains(error.name), "\(error)")
        #expect(results.count == 4)
        #expect(results.first??.name == error.name)
        #expect(results.allSatisfy { $0 != nil })
    }

    @Test("a write far beyond the socket buffers stays queued until the peer has read it all; then onDrain fires once")
    func drainAfterSlowPeerReads() throws {
        let loop = try EventLoop()
        let payload = lines(count: 16_384, lineLength: 1024)  // 16 MiB, far above socket buffers
        let total = payload.count * 1024
        let startReading = DispatchSemaphore(value: 0)
        let peerResult = Locked<(lines: Int, bytes: Int, error: String?)>((0, 0, nil))
        var drains = 0
        var serverConnection: TCPConnection?
        let nextTurn = try LoopTimer(loop: loop)
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            serverConnection = connection
            connection.onDrain = {
                drains += 1
                #expect(connection.queuedWriteBytes == 0)
                connection.closeAfterFlush()
            }
            connection.write(gathering: payload)
            #expect(connection.queuedWriteBytes == total)
            // A loop turn later the kernel holds all it can and the peer has read nothing: the
            // write is not done, so no drain yet. Only then may the peer read.
            nextTurn.start(afterMilliseconds: 0) {
                #expect(drains == 0)
                #expect(connection.queuedWriteBytes == total)
                nextTurn.close()
                startReading.signal()
            }
        }
        readLinesOnNewThread(port: port, after: startReading, peerDone: notify) { line in
            peerResult.withLock { $0.lines += 1; $0.bytes += line.count + 1 }
        } failed: { error in
            peerResult.withLock { $0.error = error }
        }
        expectLoopClosesCleanly(loop)
        let result = peerResult.withLock { $0 }
        #expect(result.error == nil)
        #expect(result.lines == payload.count)
        #expect(result.bytes == total)
        #expect(drains == 1)
        #expect(serverConnection?.queuedWriteBytes == 0)
    }

    @Test("closeAfterFlush delivers every queued byte, then EOF; later writes are ignored")
    func closeAfterFlushDeliversAllThenEOF() throws {
        let loop = try EventLoop()
        let peerLines = Locked<[String]>([])
        var closeErrors: [UVError?] = []
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            connection.onClose = { closeErrors.append($0) }
            for index in 0..<1000 { connection.write(Array("line \(index)\n".utf8)) }
            connection.write(Array("bye\n".utf8))
            connection.closeAfterFlush()
            #expect(!connection.isOpen)
            connection.write(Array("too late\n".utf8))
            connection.closeAfterFlush()
        }
        onNewThread {
            do {
                let socket = try BlockingLineSocket(host: "127.0.0.1", port: port)
                while let line = try socket.readLine(timeoutMilliseconds: 10_000) {
                    peerLines.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
                }
                peerLines.withLock { $0.append("<EOF>") }
                socket.close()
            } catch {
                peerLines.withLock { $0.append("error: \(error)") }
            }
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        let expected = (0..<1000).map { "line \($0)" } + ["bye", "<EOF>"]
        #expect(peerLines.withLock { $0 } == expected)
        #expect(closeErrors.count == 1)
        #expect(closeErrors.first ?? nil == nil)
    }
}
