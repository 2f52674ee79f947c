import Domain
import JSON

extension EventCoding {
    /// The log's payload text for a change: exactly `encode(change).serialized(sortedKeys: true)`.
    /// The changes players make all the time are written straight to bytes, keys in sorted order,
    /// because building a dictionary per event only to sort it again showed in profiles of the
    /// loop thread; the rest take the tree. A test holds the two paths equal for every kind.
    public static func payloadText(_ change: Change) -> String {
        var object = SortedObjectWriter()
        switch change {
        case .pointsAdjusted(let delta, let reason):
            object.int("delta", delta)
            object.string("reason", reason)
        case .challengeCompleted(let challenge, let option, let proof, let forced, let points):
            object.string("challenge", challenge)
            object.bool("forced", forced)
            object.string("option", option.rawValue)
            object.int("points", points)
            object.value("proof", proof.map(proofView) ?? .null)
        case .rewardUnlocked(let reward, let cost, let forced):
            object.int("cost", cost)
            object.bool("forced", forced)
            object.string("reward", reward)
        case .secretSaved(let challenge, let author, let title, let description, let points):
            object.string("author", author)
            object.string("challenge", challenge)
            object.string("description", description)
            object.int("points", points)
            object.string("title", title)
        case .finalBadgeUnlocked(let forced):
            object.bool("forced", forced)
        case .secretDelivered(let challenge):
            object.string("challenge", challenge)
        default:
            return encode(change).serialized(sortedKeys: true)
        }
        return object.finish()
    }
}

/// Writes one JSON object whose members the caller gives in sorted key order.
private struct SortedObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    init() { bytes.reserveCapacity(128) }

    /// Keys are the plain ASCII names above: nothing in them needs escaping.
    private mutating func key(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: key.utf8)
        bytes.append(contentsOf: #"":"#.utf8)
    }

    mutating func string(_ name: String, _ text: String) {
        key(name)
        JSONValue.writeQuotedString(text, into: &bytes)
    }

    mutating func int(_ name: String, _ number: Int) {
        key(name)
        JSONValue.writeInt(number, into: &bytes)
    }

    mutating func bool(_ name: String, _ flag: Bool) {
        key(name)
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
    }

    mutating func value(_ name: String, _ value: JSONValue) {
        key(name)
        value.write(to: &bytes, sortedKeys: true)
    }

    mutating func finish() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
