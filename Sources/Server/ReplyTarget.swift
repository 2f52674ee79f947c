import JSON
import Protocol

/// Where a reply goes: the connection and the place in its reply order.
struct ReplyTarget {
    let connection: ClientConnection
    let slot: Int

    /// `then` goes out right after the reply, in the same place of the order (a subscribe's first push).
    func ok(_ id: RequestID, version: Int?, result: JSONValue, replayed: Bool = false, then push: [UInt8] = []) {
        var line = Wire.reply(id: id, version: version, result: result, replayed: replayed)
        // Nearly every reply has no push: appending nothing would still copy the line.
        if !push.isEmpty { line += push }
        connection.fill(slot: slot, with: line, error: nil)
    }

    /// The same, with a result already encoded.
    func ok(_ id: RequestID, version: Int?, encodedResult: [UInt8], replayed: Bool = false) {
        connection.fill(slot: slot, with: Wire.reply(id: id, version: version, encodedResult: encodedResult, replayed: replayed),
                        error: nil)
    }

    func error(_ id: RequestID?, _ error: ProtocolError, version: Int? = nil) {
        connection.fill(slot: slot, with: Wire.error(id: id, error, version: version), error: error.code)
    }
}
