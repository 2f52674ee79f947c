import JSON

/// The server's lines, built straight into bytes: these are the hottest messages,
/// so no intermediate JSON tree is made for the envelope.
public enum Wire {
    /// The `protocol` of the hello push.
    public static let protocolVersion = 1

    /// An `ok` reply line (newline included): `version` is the game version the answer reflects,
    /// `replayed` marks a retry answered from its first reply.
    public static func reply(id: RequestID, version: Int?, result: JSONValue, replayed: Bool = false) -> [UInt8] {
        reply(id: id, version: version, replayed: replayed) { result.write(to: &$0) }
    }

    /// The same with the result already encoded (a keyed command's, made once for the log).
    public static func reply(id: RequestID, version: Int?, encodedResult: [UInt8], replayed: Bool = false) -> [UInt8] {
        reply(id: id, version: version, replayed: replayed) { $0 += encodedResult }
    }

    private static func reply(id: RequestID, version: Int?, replayed: Bool, result: (inout [UInt8]) -> Void) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        out += #"{"id":"#.utf8
        write(id, into: &out)
        out += #","ok":true"#.utf8
        if let version {
            out += #","version":"#.utf8
            JSONValue.writeInt(version, into: &out)
        }
        if replayed { out += #","replayed":true"#.utf8 }
        out += #","result":"#.utf8
        result(&out)
        out += "}\n".utf8
        return out
    }

    /// A refusal line: `id` null when the request had no usable one; `version` where the code
    /// carries it (`version_conflict`).
    public static func error(id: RequestID?, _ error: ProtocolError, version: Int? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out += #"{"id":"#.utf8
        if let id { write(id, into: &out) } else { out += "null".utf8 }
        out += #","ok":false"#.utf8
        if let version {
            out += #","version":"#.utf8
            JSONValue.writeInt(version, into: &out)
        }
        out += #","error":{"code":"#.utf8
        JSONValue.writeQuotedString(error.code.rawValue, into: &out)
        out += #","message":"#.utf8
        JSONValue.writeQuotedString(error.message, into: &out)
        if let field = error.field {
            out += #","field":"#.utf8
            JSONValue.writeQuotedString(field, into: &out)
        }
        out += "}}\n".utf8
        return out
    }

    /// `idleTimeoutSeconds`, when the server has one, tells clients how often to show signs of
    /// life (an extension: PROTOCOL.md's fields are unchanged).
    public static func hello(server: String, game: String, version: Int, idleTimeoutSeconds: Int? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out += #"{"push":"hello","protocol":"#.utf8
        JSONValue.writeInt(protocolVersion, into: &out)
        out += #","server":"#.utf8
        JSONValue.writeQuotedString(server, into: &out)
        out += #","game":"#.utf8
        JSONValue.writeQuotedString(game, into: &out)
        out += #","version":"#.utf8
        JSONValue.writeInt(version, into: &out)
        if let idleTimeoutSeconds {
            out += #","idle_timeout":"#.utf8
            JSONValue.writeInt(idleTimeoutSeconds, into: &out)
        }
        out += "}\n".utf8
        return out
    }

    /// The same, with the state already encoded.
    public static func snapshot(version: Int, encodedState: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(encodedState.count + 48)
        out += #"{"push":"snapshot","version":"#.utf8
        JSONValue.writeInt(version, into: &out)
        out += #","state":"#.utf8
        out += encodedState
        out += "}\n".utf8
        return out
    }

    /// A snapshot push: one viewer's whole view at `version`.
    public static func snapshot(version: Int, state: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out += #"{"push":"snapshot","version":"#.utf8
        JSONValue.writeInt(version, into: &out)
        out += #","state":"#.utf8
        state.write(to: &out)
        out += "}\n".utf8
        return out
    }

    /// A patch push: the RFC 6902 ops that turn one viewer's view at `from` into its view at `to`
    /// (empty when that view did not change).
    public static func patch(from: Int, to: Int, ops: [PatchOp]) -> [UInt8] {
        var out: [UInt8] = []
        out += #"{"push":"patch","from":"#.utf8
        JSONValue.writeInt(from, into: &out)
        out += #","to":"#.utf8
        JSONValue.writeInt(to, into: &out)
        out += #","ops":["#.utf8
        for (index, op) in ops.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            op.write(to: &out)
        }
        out += "]}\n".utf8
        return out
    }

    public enum ByeReason: String, Sendable {
        case serverShutdown = "server_shutdown"
        case tooManyErrors = "too_many_errors"
        case unclaimed
        case idleTimeout = "idle_timeout"
    }

    /// The last line the server sends on a connection it closes on purpose.
    public static func bye(_ reason: ByeReason) -> [UInt8] {
        Array(#"{"push":"bye","reason":"\#(reason.rawValue)"}"#.utf8) + [0x0A]
    }

    private static func write(_ id: RequestID, into out: inout [UInt8]) {
        switch id {
        case .int(let number): JSONValue.writeInt(number, into: &out)
        case .string(let text): JSONValue.writeQuotedString(text, into: &out)
        }
    }
}
