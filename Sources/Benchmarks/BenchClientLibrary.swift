import Client
import Foundation
import JSON
import POSIXSupport

/// `bq bench load --client-library`: the same shape and mix driven through the Client library
/// that `bq play` and `bq admin` use. Each connection is a blocking `GameClient` (with its own
/// reader thread); each mutating connection is a thread that keeps `depth` requests pipelined
/// with `send` and waits for them in order; each subscriber counts the patches its mirror
/// applies. It measures the library together with the server: on a small machine fifty
/// threads cost more than the one-loop driver, so read its figures as the library's, next to
/// the loop driver's.
final class ClientLibraryDriver: @unchecked Sendable {
    private let shape: LoadShape
    private let tokens: [[String: String]]

    // Everything below is guarded by `lock`: the mutator threads and the clients' reader
    // threads record into it.
    private let lock = NSLock()
    private var latencies = LatencyHistograms()
    private var result = LoadResult()
    private let delivery: [GameDelivery]
    private var windowStart = UInt64.max
    private var windowEnd = UInt64.max
    private var stopping = false

    init(shape: LoadShape, tokens: [[String: String]]) {
        self.shape = shape
        self.tokens = tokens
        delivery = shape.games.map { _ in GameDelivery() }
    }

    /// Connects everyone, measures one window, stops, and sums up. `onWindow` runs at the
    /// window's start and end (to read the server's CPU).
    func run(onWindow: (_ starting: Bool) -> Void) throws -> LoadResult {
        var subscribers: [GameClient] = []
        defer { for client in subscribers { client.close() } }
        for game in shape.games.indices {
            for slot in 0..<shape.subscribersPerGame {
                let client = try signedIn(as: BenchActor.viewers[slot % BenchActor.viewers.count], game: game)
                client.onEvent { [weak self] event in
                    if case .patch(let from, let to, _, _, _) = event { self?.patchArrived(game: game, from: from, to: to) }
                }
                subscribers.append(client)
                try client.subscribe()
            }
        }
        var mutators: [(client: GameClient, actor: BenchActor, game: Int)] = []
        defer { for mutator in mutators { mutator.client.close() } }
        for (game, actor) in BenchActor.mutators(of: shape) {
            mutators.append((try signedIn(as: actor, game: game), actor, game))
        }

        let finished = DispatchGroup()
        for mutator in mutators {
            finished.enter()
            let thread = Thread { [self] in
                drive(mutator.client, as: mutator.actor, game: mutator.game)
                finished.leave()
            }
            thread.name = "bq-bench-client"
            thread.start()
        }
        // A benchmark's clock, not a test's: the window is wall time by definition.
        Thread.sleep(forTimeInterval: shape.warmupSeconds)
        onWindow(true)
        let cpuAtStart = processCPUSeconds()
        locked { windowStart = Self.now() }
        Thread.sleep(forTimeInterval: shape.durationSeconds)
        locked { windowEnd = Self.now() }
        onWindow(false)
        let cpuAtEnd = processCPUSeconds()
        locked { stopping = true }
        finished.wait()

        return locked {
            var summary = result
            latencies.summarize(into: &summary)
            summary.windowSeconds = Double(windowEnd - windowStart) / 1e9
            summary.clientCPUSeconds = cpuAtEnd - cpuAtStart
            return summary
        }
    }

    private func signedIn(as actor: BenchActor, game: Int) throws -> GameClient {
        var options = ClientOptions()
        options.reconnect = false
        let client = try GameClient.connect(host: shape.host, port: shape.port, options: options)
        do {
            switch actor {
            case .admin:
                try client.signInAdmin(key: shape.adminKey, game: shape.games[game])
            case .organizer(let name), .friend(let name), .birthday(let name):
                guard let token = tokens[game][name] else { throw BenchError("no token for \(name) in \(shape.games[game])") }
                try client.auth(token: token)
            }
        } catch {
            client.close()
            throw error
        }
        return client
    }

    /// One mutating connection, on its own thread, until the window has ended.
    private func drive(_ client: GameClient, as actor: BenchActor, game: Int) {
        var inFlight: [(request: PendingRequest, sentAt: UInt64)] = []
        var sequence = 0
        while !locked({ stopping }) {
            while inFlight.count < shape.depth {
                sequence += 1
                let (op, args) = Self.mutation(for: actor, sequence: sequence)
                inFlight.append((client.send(op, args), Self.now()))
            }
            let (request, sentAt) = inFlight.removeFirst()
            record(Result { () throws(ClientError) -> Reply in try request.wait(timeout: 30) }, game: game, sentAt: sentAt)
            if case .birthday = actor {
                // A person, not a script: at most one attempt per connection every 10 ms.
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        for (request, _) in inFlight { _ = try? request.wait(timeout: 30) }
    }

    private static func mutation(for actor: BenchActor, sequence: Int) -> (String, [String: JSONValue]) {
        switch actor {
        case .admin, .organizer:
            return ("adjust_points", ["delta": 1, "reason": "bench"])
        case .friend:
            return ("save_secret", ["title": "Bench dare", "description": .string("edit \(sequence)"), "points": 50])
        case .birthday:
            let turn = sequence / 2
            if sequence % 2 == 0 {
                return ("complete_challenge", ["challenge": .string("c" + (turn % 15 + 1).paddedTwoDigits),
                                               "proof": ["kind": "done"]])
            }
            return ("unlock_reward", ["reward": .string("r" + (turn % 9 + 1).paddedTwoDigits)])
        }
    }

    private func record(_ outcome: Result<Reply, ClientError>, game: Int, sentAt: UInt64) {
        let now = Self.now()
        locked {
            let inWindow = now >= windowStart && now <= windowEnd
            switch outcome {
            case .success(let reply) where reply.replayed:
                if inWindow { result.replayed += 1 }
            case .success(let reply):
                if let version = reply.version, shape.subscribersPerGame > 0 {
                    delivery[game].committed(version: version, sentAt: sentAt, sample: recordDelivery)
                }
                if inWindow {
                    result.acknowledged += 1
                    latencies.recordAck(sentAt: sentAt, now: now)
                }
            case .failure(let error):
                guard inWindow else { return }
                if let code = error.refusal?.code, LoadDriver.refusalCodes.contains(code) {
                    result.countRefusal(code)
                    latencies.recordAck(sentAt: sentAt, now: now)
                } else {
                    result.countError(error.refusal?.code ?? "\(error)")
                }
            }
        }
    }

    /// A subscriber's mirror applied the patch (from, to]: one delivery sample per version.
    private func patchArrived(game: Int, from: Int, to: Int) {
        let now = Self.now()
        locked {
            if now >= windowStart && now <= windowEnd { result.patchesReceived += 1 }
            delivery[game].arrived(from: from, to: to, at: now, sample: recordDelivery)
        }
    }

    /// Caller holds `lock`.
    private func recordDelivery(sentAt: UInt64, arrival: UInt64) {
        guard sentAt >= windowStart, sentAt <= windowEnd, arrival >= sentAt else { return }
        latencies.recordDelivery(sentAt: sentAt, now: arrival)
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
