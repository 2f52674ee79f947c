extension JSONPatch {
    /// The JSON Pointer (RFC 6901) for `tokens`: `""` for none, else `/t1/t2...` with each token escaped.
    public static func pointer(_ tokens: [String]) -> String {
        var result = ""
        for token in tokens {
            result += "/"
            result += escapeToken(token)
        }
        return result
    }

    /// Escapes one reference token: `~` becomes `~0` and `/` becomes `~1`.
    public static func escapeToken(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == 0x7E || $0 == 0x2F }) else { return s }
        var result = ""
        result.reserveCapacity(s.utf8.count + 4)
        for character in s.unicodeScalars {
            switch character {
            case "~": result += "~0"
            case "/": result += "~1"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    /// Splits a JSON Pointer into unescaped reference tokens (`""` is the whole document).
    /// Throws for a non-empty pointer without a leading `/` or a `~` not followed by `0` or `1`.
    public static func tokens(of pointer: String) throws(JSONPatchError) -> [String] {
        if pointer.isEmpty { return [] }
        guard pointer.utf8.first == 0x2F else {
            throw JSONPatchError(path: pointer, message: "pointer must be empty or start with '/'")
        }
        var tokens: [String] = []
        var current = ""
        var scalars = pointer.unicodeScalars.dropFirst().makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "/":
                tokens.append(current)
                current = ""
            case "~":
                switch scalars.next() {
                case "0": current += "~"
                case "1": current += "/"
                default: throw JSONPatchError(path: pointer, message: "'~' must be followed by '0' or '1'")
                }
            default:
                current.unicodeScalars.append(scalar)
            }
        }
        tokens.append(current)
        return tokens
    }
}
