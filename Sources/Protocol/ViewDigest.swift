import Crypto
import JSON

/// A fingerprint of one viewer's view, which a client sends with `subscribe since` as
/// `since_digest`: a version number alone cannot tell the game a client last saw from another
/// game that reached the same version (a log restored from an older backup, then played on).
///
/// The digest is SHA-256, as 64 lowercase hex digits, of the view's canonical text: compact JSON
/// (no whitespace), object members sorted by key (every key in a view is ASCII), strings with
/// only `"`, `\` and the controls below U+0020 escaped (`\n \r \t \b \f`, the others as
/// `\u00xx`), everything else as raw UTF-8, integers in decimal. Python's
/// `json.dumps(view, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` writes the same
/// text, so a client in another language can compute it from the JSON it holds.
public enum ViewDigest {
    /// The digest of `view`.
    public static func of(_ view: JSONValue) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(4096)
        view.write(to: &text, sortedKeys: true)
        return lowercaseHex(SHA256.hash(data: text))
    }

    /// `text` as a digest to compare with `of`: 64 hex digits, lowercased; nil for anything else.
    public static func normalized(_ text: String) -> String? {
        guard text.utf8.count == 64, text.utf8.allSatisfy({ isHexDigit($0) }) else { return nil }
        return text.lowercased()
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
    }
}

/// Bytes as lowercase hex, built in one buffer (the server makes one for every keyed mutation).
/// Inlinable, so that the server's callers get it specialized to their bytes' type: the generic
/// version iterated through witness calls, which showed in a profile of keyed mutations.
@inlinable
public func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(64)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}
