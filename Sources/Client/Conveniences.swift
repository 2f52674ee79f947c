import JSON

extension GameClient {
    /// Claims `character` for `device`; on success the token is kept for reconnects.
    @discardableResult
    public func claim(character: String, device: String, pin: String? = nil,
                      game: String? = nil) throws(ClientError) -> Reply {
        var args: [String: JSONValue] = ["character": .string(character), "device": .string(device)]
        if let pin { args["pin"] = .string(pin) }
        if let game { args["game"] = .string(game) }
        return try request("claim", args)
    }

    /// Signs in with a token from an earlier `claim`.
    @discardableResult
    public func auth(token: String) throws(ClientError) -> Reply {
        try request("auth", ["token": .string(token)])
    }

    /// Signs in as the admin console.
    @discardableResult
    public func signInAdmin(key: String, game: String? = nil) throws(ClientError) -> Reply {
        var args: [String: JSONValue] = ["key": .string(key)]
        if let game { args["game"] = .string(game) }
        return try request("admin", args)
    }

    /// Subscribes and waits until the mirror holds the view at the reply's version; returns it.
    @discardableResult
    public func subscribe(timeout: Double? = nil) throws(ClientError) -> JSONValue {
        let reply = try request("subscribe", [:], timeout: timeout)
        guard waitForMirror(atLeast: reply.version ?? 0, timeout: timeout), let view else {
            throw .timedOut(op: "subscribe")
        }
        return view
    }

    /// The current view, read fresh from the server; `timeout` as for `request`.
    public func fetchState(timeout: Double? = nil) throws(ClientError) -> (version: Int, view: JSONValue) {
        let reply = try request("state", timeout: timeout)
        return (reply.version ?? 0, reply.result["state"] ?? .null)
    }

    /// The characters and whether each is claimed.
    public func characters(game: String? = nil) throws(ClientError) -> [JSONValue] {
        var args: [String: JSONValue] = [:]
        if let game { args["game"] = .string(game) }
        return try request("characters", args).result["characters"]?.arrayValue ?? []
    }
}

extension JSONValue {
    /// A game version as the server sends it: a count of events, never below 0. Anything else
    /// (a faulty or foreign server's) is no version at all, so that arithmetic on versions, here
    /// and in the programs that read them, cannot overflow.
    public var versionNumber: Int? {
        guard let number = intValue, number >= 0 else { return nil }
        return number
    }
}
