import Client
import Foundation
import JSON
import UV

/// A scripted stand-in for the server, for what a real server never does on purpose (a patch
/// that does not chain). Runs its own libuv loop on its own thread; `respond` runs there, gets
/// each request but `ping` and returns the lines to send back; a line `FakeServer.hangUp`
/// among them closes the connection once the lines before it are written. `afterHello` gets
/// each connection's number (from 1) and returns lines to send right after `hello`, a hang-up
/// included (as a full server does).
final class FakeServer: @unchecked Sendable {
    /// Set by the loop thread before `ready` is signalled, then only read.
    private(set) var port = 0
    /// Loop thread only.
    private var stopper: AsyncWakeup?
    /// Set by the loop thread before `ready` is signalled, then only read.
    private var stopSender: AsyncWakeup.Sender?
    private let ready = DispatchSemaphore(value: 0)
    /// Signalled once for every connection that closes, whichever side closed it.
    let closings = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    static let hangUp: JSONValue = ["fake": "hang up"]
    /// A line sent as `text`, not as JSON: what a broken server or middlebox might send.
    static func raw(_ text: String) -> JSONValue { ["fake": "raw", "text": .string(text)] }
    /// A server's first line, for scripts with nothing to say in it.
    static let hello: JSONValue = ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]

    /// `answersPing(connection, ping)`: whether the `ping`th ping (from 1) on the `connection`th
    /// connection (from 1) is answered; all of them by default. `afterPong(connection)`: lines
    /// to send after each answer to a ping on that connection (pushes of a busy game, say).
    /// `lineDelayMilliseconds`: a slow link, every line to the client (the hello too) sent that
    /// long after the server would have sent it, from connection `slowFrom` on (the first by
    /// default: a network that became slow later starts at a later one).
    init(hello: JSONValue = FakeServer.hello, afterHello: @escaping @Sendable (Int) -> [JSONValue] = { _ in [] },
         answersPing: @escaping @Sendable (Int, Int) -> Bool = { _, _ in true },
         afterPong: @escaping @Sendable (Int) -> [JSONValue] = { _ in [] },
         lineDelayMilliseconds: UInt64 = 0, slowFrom: Int = 1,
         respond: @escaping @Sendable (JSONValue) -> [JSONValue]) {
        let thread = Thread { [self] in
            guard let loop = try? EventLoop() else {
                ready.signal()
                return
            }
            var connections: [TCPConnection] = []
            var timers: [LoopTimer] = []
            let server = try? TCPServer(loop: loop, host: "127.0.0.1", port: 0) { connection in
                connections.append(connection)
                let number = connections.count
                var pending: [UInt8] = []
                var pings = 0
                // Writes `lines` in order, after the link's delay; a hang-up closes the
                // connection once the lines before it are written.
                func send(_ lines: [JSONValue]) {
                    // One write, as a server sends what one turn produced: the lines arrive
                    // together, as a burst does.
                    func write() {
                        let before = lines.prefix { $0 != FakeServer.hangUp }
                        func bytes(_ line: JSONValue) -> [UInt8] {
                            Array(((line["fake"] == "raw" ? line["text"]?.stringValue : nil) ?? line.serialized()).utf8) + [0x0A]
                        }
                        if !before.isEmpty { connection.write(gathering: before.map(bytes)) }
                        if before.count < lines.count { connection.closeAfterFlush() }
                    }
                    guard lineDelayMilliseconds > 0, number >= slowFrom, let timer = try? LoopTimer(loop: loop) else { return write() }
                    timers.append(timer)
                    timer.start(afterMilliseconds: lineDelayMilliseconds) { write() }
                }
                connection.onRead = { bytes in
                    pending += bytes
                    while let newline = pending.firstIndex(of: 0x0A) {
                        let line = Array(pending[..<newline])
                        pending.removeSubrange(...newline)
                        guard let request = try? JSONParser.parse(line) else { continue }
                        // Pings (the client sends one after every hello) are answered as any
                        // server would, so that scripts see only the requests they are about.
                        if request["op"] == "ping" {
                            pings += 1
                            guard answersPing(number, pings) else { continue }
                            let pong: JSONValue = ["id": request["id"] ?? .null, "ok": true, "version": 1, "result": [:]]
                            send([pong] + afterPong(number))
                            continue
                        }
                        send(respond(request))
                    }
                }
                send([hello] + afterHello(number))
                connection.onClose = { [closings = self.closings] _ in closings.signal() }
                connection.startReading()
            }
            stopper = try? AsyncWakeup(loop: loop) { [self] in
                server?.close()
                for connection in connections { connection.close() }
                for timer in timers { timer.close() }
                stopper?.close()
            }
            stopSender = stopper?.sender
            port = server?.localPort ?? 0
            ready.signal()
            loop.run()
            try? loop.close()
            finished.signal()
        }
        thread.start()
        ready.wait()
    }

    /// Closes the listener and every connection, and waits for the loop to end.
    func stop() {
        stopSender?.send()
        _ = finished.wait(timeout: .now() + 10)
    }
}

/// Counts calls from any thread: how many times a fake server's script saw a request.
final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// Counts one more call and returns the total, this one included.
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

extension FakeServer {
    /// A client of this server that does not reconnect, its events recorded, subscribed.
    func subscribedClient() throws -> (client: GameClient, events: EventLog) {
        var options = ClientOptions()
        options.reconnect = false
        let client = try GameClient.connect(port: port, options: options)
        let events = EventLog()
        client.onEvent { events.append($0) }
        do {
            try client.subscribe()
        } catch {
            client.close()
            throw error
        }
        return (client, events)
    }
}
