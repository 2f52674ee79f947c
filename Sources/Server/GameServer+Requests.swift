import Domain
import JSON
import Protocol
import Views

/// Requests, by op: what needs no sign-in, what reads, and what goes to a game hub as a command.
extension GameServer {

    var defaultHub: GameHub { hubs[config.defaultGame]! }

    func hub(named name: String?) -> GameHub? { hubs[name ?? config.defaultGame] }

    func handle(_ request: Request, from connection: ClientConnection, target: ReplyTarget) {
        if shuttingDown {
            return target.error(request.id, ProtocolError(.unavailable, "The server is shutting down"))
        }
        switch request.operation {
        case .ping:
            target.ok(request.id, version: connection.hub.durable.version, result: .object([:]))
        case .characters(let game):
            guard let hub = hub(named: game) else { return target.error(request.id, noSuchGame(game)) }
            // Who is online is the organizer's business (and the console's), not everyone's; not
            // a device whose organizer token a takeover or unclaim has just ended (its `bye` is
            // on its way), which gets the public list.
            let seesPresence = connection.hub === hub && connection.identity.map { hub.durable.isOrganizer($0.actor) } == true
                && !hub.holdsRevokedToken(connection)
            let list: [JSONValue] = hub.durable.sortedCharacters.map {
                var fields: [String: JSONValue] = ["id": .string($0.id), "name": .string($0.name),
                                                   "role": .string($0.role.rawValue), "claimed": .bool($0.isClaimed)]
                if seesPresence { fields["connected"] = .int(hub.connectionCount(of: $0.id)) }
                return .object(fields)
            }
            target.ok(request.id, version: hub.durable.version, result: .object(["characters": .array(list)]))
        case .claim(let character, let device, let pin, let game):
            guard let hub = hub(named: game) else { return target.error(request.id, noSuchGame(game)) }
            claim(character: character, device: device, pin: pin, hub: hub, request: request, connection: connection, target: target)
        case .auth(let token):
            let hash = Secrets.hash(token)
            for hub in hubs.values {
                if let character = hub.durable.character(forTokenHash: hash) {
                    connection.signIn(.character(character.id, tokenHash: hash), hub: hub)
                    return target.ok(request.id, version: hub.durable.version, result: .object([
                        "character": .string(character.id), "role": .string(character.role.rawValue), "game": .string(hub.name)]))
                }
            }
            target.error(request.id, ProtocolError(.unauthenticated, "Unknown or revoked token: claim the character again"))
        case .admin(let key, let game):
            signInAdmin(key: key, game: game, request: request, connection: connection, target: target)
        default:
            guard let identity = connection.identity else {
                return target.error(request.id, ProtocolError(.unauthenticated, "Sign in first: claim a character, auth with a token, or admin with the key"))
            }
            handleSignedIn(request, identity: identity, connection: connection, target: target)
        }
    }

    private func handleSignedIn(_ request: Request, identity: Identity, connection: ClientConnection, target: ReplyTarget) {
        let hub = connection.hub
        // A request queued behind this connection's own can start in the publish of the takeover
        // or unclaim that ended its token, before the `bye` goes out: it must see nothing of the
        // game from there on. (A change decided later than that is refused by `GameHub.submit`.)
        if hub.holdsRevokedToken(connection) {
            return target.error(request.id, ProtocolError(.unauthenticated, GameHub.revokedTokenMessage))
        }
        let version = hub.durable.version
        switch request.operation {
        case .whoami:
            target.ok(request.id, version: version, result: whoami(identity, hub: hub))
        case .state:
            let view = hub.encodedView(for: identity.viewer)
            var result: [UInt8] = []
            result.reserveCapacity(view.count + 10)
            result += #"{"state":"#.utf8
            result += view
            result.append(UInt8(ascii: "}"))
            target.ok(request.id, version: version, encodedResult: result)
        case .subscribe(let since, let sinceDigest):
            hub.handleSubscribe(from: connection, since: since, sinceDigest: sinceDigest, id: request.id, target: target)
        case .unsubscribe:
            connection.unsubscribe()
            target.ok(request.id, version: version, result: .object([:]))
        case .timeline(let after, let limit):
            let entries = hub.durable.timeline(after: after).prefix(limit).map(timelineView)
            target.ok(request.id, version: version, result: .object(["entries": .array(Array(entries))]))
        case .events(let after, let limit):
            guard hub.durable.isOrganizer(identity.actor) else {
                return target.error(request.id, ProtocolError(.forbidden, "Only the organizer can read the event log"))
            }
            events(hub: hub, after: after, limit: limit, request: request, target: target)
        case .mutation(let command):
            hub.submit(command, request: request, identity: identity, target: target)
        case .ping, .characters, .claim, .auth, .admin:
            // Answered by `handle` whether signed in or not, so never routed here; were one
            // to be, its client would still get its one reply.
            assertionFailure("\(request.op) reached the signed-in dispatch")
            target.error(request.id, ProtocolError(.internal, "The server did not route this request"))
        }
    }

    private func whoami(_ identity: Identity, hub: GameHub) -> JSONValue {
        switch identity {
        case .admin: return .object(["character": .null, "role": .string("admin"), "game": .string(hub.name)])
        case .character(let id, _):
            return .object(["character": .string(id), "role": hub.durable.characters[id].map { .string($0.role.rawValue) } ?? .null,
                            "game": .string(hub.name)])
        }
    }

    /// The console's sign-in. A key short enough to guess is guarded per network, like PINs.
    private func signInAdmin(key: String, game: String?, request: Request, connection: ClientConnection, target: ReplyTarget) {
        let now = steadyNow
        let network = connection.peerNetwork
        if adminKeyIsGuessable, let seconds = adminKeyGuard.secondsToWait(network, now: now) {
            if let count = throttled.record(.closedAdminSignIn, now: loop.nowMilliseconds) {
                logger.warning("admin sign-in refused: wrong keys keep \(network) out for \(seconds) s more", metadata: [
                    "peer": "\(connection.peer)", "since_last_logged": "\(count)"])
            }
            return target.error(request.id, ProtocolError(.rateLimited,
                "Too many wrong admin keys from \(network): try again in \(seconds) s"))
        }
        guard Secrets.constantTimeEquals(key, adminKey) else {
            if adminKeyIsGuessable { adminKeyGuard.wrongGuess(network, now: now) }
            if let count = throttled.record(.wrongAdminKey, now: loop.nowMilliseconds) {
                // Most often the organizer with an old key, or another data directory's.
                let right = config.adminKey == nil ? "in \(config.adminKeyPath)" : "the configured admin_key or BQ_ADMIN_KEY"
                logger.warning("wrong admin key: the right one is \(right)",
                               metadata: ["peer": "\(connection.peer)", "since_last_logged": "\(count)"])
            }
            return target.error(request.id, ProtocolError(.unauthenticated, "Wrong admin key"))
        }
        if adminKeyIsGuessable { adminKeyGuard.rightGuess(network) }
        guard let hub = hub(named: game) else { return target.error(request.id, noSuchGame(game)) }
        connection.signIn(.admin, hub: hub)
        target.ok(request.id, version: hub.durable.version, result: .object(["role": .string("admin"), "game": .string(hub.name)]))
    }

    private func claim(character: String, device: String, pin: String?, hub: GameHub, request: Request,
                       connection: ClientConnection, target: ReplyTarget) {
        if pin != nil, let seconds = hub.pinGuard.secondsToWait(character, now: steadyNow) {
            if let count = throttled.record(.closedClaim, now: loop.nowMilliseconds) {
                logger.warning("""
                    claim of \(character) refused: wrong PINs keep it closed for \(seconds) s more \
                    (the organizer's unclaim of \(character) opens it)
                    """, metadata: ["game": "\(hub.name)", "peer": "\(connection.peer)", "since_last_logged": "\(count)"])
            }
            return target.error(request.id, ProtocolError(.rateLimited,
                "Too many wrong PINs for \(character): try again in \(seconds) s"))
        }
        let token = Secrets.newToken()
        let hash = Secrets.hash(token)
        // No identity yet, so no idempotency key applies: each claim mints a new token.
        hub.submit(.claim(character: character, device: device, pin: pin, tokenHash: hash), request: request, identity: nil, target: target,
                   onCommitted: { [unowned connection] _ in
                       if pin != nil { hub.pinGuard.rightGuess(character) }
                       connection.signIn(.character(character, tokenHash: hash), hub: hub)
                   },
                   onRefused: { [unowned self, unowned connection] code in
                       // `forbidden` is a claim's answer to a wrong PIN, and to nothing else.
                       guard pin != nil, code == .forbidden else { return }
                       hub.pinGuard.wrongGuess(character, now: self.steadyNow)
                       // Someone else's PIN guessed at (the birthday person after the gifts?),
                       // or a player who forgot theirs: either way the organizer should know.
                       // (`forbidden` also answers a PIN for a character that has none.)
                       if hub.durable.characters[character]?.pin != nil,
                          let count = self.throttled.record(.wrongPIN, now: self.loop.nowMilliseconds) {
                           self.logger.warning("wrong PIN in a claim of \(character): wrong PINs in a row close its claims for a while",
                                               metadata: ["game": "\(hub.name)", "peer": "\(connection.peer)",
                                                          "since_last_logged": "\(count)"])
                       }
                   },
                   result: { state in
                       .object(["token": .string(token), "character": .string(character),
                                "role": state.characters[character].map { .string($0.role.rawValue) } ?? .null,
                                "game": .string(hub.name)])
                   })
    }

    private func events(hub: GameHub, after: Int, limit: Int, request: Request, target: ReplyTarget) {
        do {
            // Bounded by the durable version this loop knows: the writer may have committed more
            // already, which nobody may see before its actors get their replies and patches.
            let durable = hub.durable.version
            let rows = after >= durable ? []
                : try loopStore.events(game: hub.name, after: Int64(after), through: Int64(after + min(limit, durable - after)))
            let list: [JSONValue] = rows.map { row in
                let data = EventRedaction.shown(type: row.type, payload: row.payload)
                return .object(["version": .int(Int(row.version)), "type": .string(row.type), "actor": .string(row.actor),
                                "at": .string(formatTimestamp(row.at)), "data": data])
            }
            target.ok(request.id, version: durable, result: .object(["events": .array(list)]))
        } catch {
            logger.error("cannot read events", metadata: ["game": "\(hub.name)", "error": "\(error)"])
            target.error(request.id, ProtocolError(.unavailable, "Cannot read the event log right now"))
        }
    }

    private func noSuchGame(_ game: String?) -> ProtocolError {
        ProtocolError(.notFound, "No game \"\(game ?? config.defaultGame)\" on this server")
    }

    /// The reply of a committed keyed command, from its idempotency record in the log.
    func storedReply(game: String, key: IdempotencyKey, version: Int) -> StoredReply {
        do {
            guard let reply = try loopStore.storedReply(game: game, identity: key.owner, key: key.key, version: Int64(version)) else {
                // Memory says the record was committed; a log without it has been changed under us.
                logger.critical("a remembered idempotency record is missing from the log",
                                metadata: ["game": "\(game)", "version": "\(version)"])
                return .missing
            }
            return .found(reply)
        } catch {
            logger.error("cannot read a stored reply", metadata: ["game": "\(game)", "version": "\(version)", "error": "\(error)"])
            return .unreadableNow
        }
    }
}

/// What the log gives back for a retry of a committed keyed command.
enum StoredReply {
    case found(String)
    /// Not in the log: only a log changed by hand gets here, and trying again will not help.
    case missing
    /// The log could not be read at this moment (storage failed); it may be read later.
    case unreadableNow
}
