import JSON

/// What the `events` op and `bq log` leave out of an event's payload: the credentials the log keeps.
/// - `token_hash` (and a claim's `ends_token_hash`): nobody's business, not even the organizer's.
/// - a claim's `device`: the device that holds a character may claim it again without its PIN,
///   so its id is as good as the PIN to whoever reads it.
/// - the seed's PINs (`content.characters[].pin`): they let another device take a character over.
/// The organizer reading the log could otherwise act as any player, and the log would name
/// that player as the actor.
public enum EventRedaction {
    /// A stored payload as it may be shown. One that is not JSON (a damaged log) is shown as
    /// null, not as its text: that text may hold what redaction would have taken out.
    public static func shown(type: String, payload: String) -> JSONValue {
        guard let stored = try? JSONParser.parse(Array(payload.utf8)) else { return .null }
        return redacted(type: type, data: stored)
    }

    public static func redacted(type: String, data: JSONValue) -> JSONValue {
        guard case .object(var fields) = data else { return data }
        fields["token_hash"] = nil
        fields["ends_token_hash"] = nil
        if type == "character_claimed" { fields["device"] = nil }
        if type == "game_seeded", case .object(var content)? = fields["content"],
           case .array(let characters)? = content["characters"] {
            content["characters"] = .array(characters.map { character in
                guard case .object(var entry) = character else { return character }
                entry["pin"] = nil
                return .object(entry)
            })
            fields["content"] = .object(content)
        }
        return .object(fields)
    }
}
