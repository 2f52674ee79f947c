/// One JSON Patch (RFC 6902) operation; the subset the game's views need.
public enum PatchOp: Sendable, Hashable {
    case add(path: String, value: JSONValue)
    case remove(path: String)
    case replace(path: String, value: JSONValue)

    /// The JSON Pointer this operation targets.
    public var path: String {
        switch self {
        case .add(let path, _), .remove(let path), .replace(let path, _): return path
        }
    }

    /// The wire form, e.g. `{"op":"add","path":"/timeline/-","value":{...}}`.
    public var json: JSONValue {
        switch self {
        case .add(let path, let value): return ["op": "add", "path": .string(path), "value": value]
        case .remove(let path): return ["op": "remove", "path": .string(path)]
        case .replace(let path, let value): return ["op": "replace", "path": .string(path), "value": value]
        }
    }

    /// Reads the wire form; refuses other ops (`move`, `copy`, `test`) and missing members.
    public init(json: JSONValue) throws(JSONPatchError) {
        guard let op = json["op"]?.stringValue else {
            throw JSONPatchError(path: "", message: "operation needs a string 'op'")
        }
        guard let path = json["path"]?.stringValue else {
            throw JSONPatchError(path: "", message: "operation needs a string 'path'")
        }
        switch op {
        case "add", "replace":
            guard let value = json["value"] else {
                throw JSONPatchError(path: path, message: "'\(op)' needs a 'value'")
            }
            self = op == "add" ? .add(path: path, value: value) : .replace(path: path, value: value)
        case "remove":
            self = .remove(path: path)
        default:
            throw JSONPatchError(path: path, message: "unsupported op '\(op)'")
        }
    }
}

/// Why a patch could not be applied or read.
public struct JSONPatchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pointer of the failing operation.
    public var path: String
    /// What was wrong, in words.
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "JSON patch error at \"\(path)\": \(message)" }
}

/// Diffing and applying JSON Patches over `JSONValue`.
public enum JSONPatch {
    /// The operations turning `old` into `new`, with paths below `path`.
    ///
    /// Stable rules, chosen so that views produce small, predictable patches:
    /// - equal values: nothing;
    /// - two objects: member by member in sorted key order (`remove`, `add`, or recurse);
    /// - two arrays where `old` is a strict prefix of `new`: one `add` at `<path>/-` per new
    ///   element (the timeline only grows);
    /// - anything else: one `replace` of the whole value at `path`.
    public static func diff(_ old: JSONValue, _ new: JSONValue, path: String = "") -> [PatchOp] {
        var ops: [PatchOp] = []
        diff(old, new, path: path, into: &ops)
        return ops
    }

    private static func diff(_ old: JSONValue, _ new: JSONValue, path: String, into ops: inout [PatchOp]) {
        if old == new { return }
        diffUnequal(old, new, path: path, into: &ops)
    }

    /// The same, for values the caller already found unequal. Ops come in key order, but only
    /// the members that differ are sorted: each member pair is compared once, and a path is
    /// built only for a member that gets an op or differs further down.
    private static func diffUnequal(_ old: JSONValue, _ new: JSONValue, path: String, into ops: inout [PatchOp]) {
        switch (old, new) {
        case (.object(let before), .object(let after)):
            for key in differingKeys(before, after).sorted() {
                switch (before[key], after[key]) {
                case (let was?, let now?): diffUnequal(was, now, path: path + "/" + escapeToken(key), into: &ops)
                case (_?, nil): ops.append(.remove(path: path + "/" + escapeToken(key)))
                case (nil, let now?): ops.append(.add(path: path + "/" + escapeToken(key), value: now))
                case (nil, nil): break
                }
            }
        case (.array(let before), .array(let after)) where after.count > before.count && after.starts(with: before):
            for element in after[before.count...] {
                ops.append(.add(path: path + "/-", value: element))
            }
        default:
            ops.append(.replace(path: path, value: new))
        }
    }

    /// The keys whose member was added, removed or changed, in no particular order.
    private static func differingKeys(_ before: [String: JSONValue], _ after: [String: JSONValue]) -> [String] {
        var keys: [String] = []
        var kept = 0
        for (key, now) in after {
            if let was = before[key] {
                kept += 1
                if was != now { keys.append(key) }
            } else {
                keys.append(key)
            }
        }
        // Every key of `before` is in `after` unless some were left over.
        if kept < before.count {
            for key in before.keys where after[key] == nil { keys.append(key) }
        }
        return keys
    }

    /// Applies `ops` in order. All or nothing: on error the caller's document is untouched
    /// (it is a value) and the partial result is discarded.
    public static func apply(_ ops: [PatchOp], to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var result = document
        for op in ops { try apply(op, to: &result) }
        return result
    }

    private static func apply(_ op: PatchOp, to document: inout JSONValue) throws(JSONPatchError) {
        let path = op.path
        let tokens = try tokens(of: path)
        guard let last = tokens.last else {
            switch op {
            case .add(_, let value), .replace(_, let value): document = value
            case .remove: throw JSONPatchError(path: path, message: "cannot remove the whole document")
            }
            return
        }
        try withContainer(&document, at: tokens.dropLast(), path: path) { (container: inout JSONValue) throws(JSONPatchError) in
            try applyLast(op, token: last, to: &container, path: path)
        }
    }

    /// Runs `body` on the value at `tokens`, mutating it in place. Each level's payload is moved
    /// out of its enum (leaving `.null` behind) so the nested storage stays uniquely referenced
    /// and is not copied.
    private static func withContainer(
        _ value: inout JSONValue,
        at tokens: ArraySlice<String>,
        path: String,
        _ body: (inout JSONValue) throws(JSONPatchError) -> Void
    ) throws(JSONPatchError) {
        guard let token = tokens.first else {
            try body(&value)
            return
        }
        let rest = tokens.dropFirst()
        switch value {
        case .object(var members):
            guard members[token] != nil else {
                throw JSONPatchError(path: path, message: "no member '\(token)'")
            }
            value = .null
            try withContainer(&members[token]!, at: rest, path: path, body)
            value = .object(members)
        case .array(var elements):
            guard let index = arrayIndex(token), index < elements.count else {
                throw JSONPatchError(path: path, message: "no element '\(token)'")
            }
            value = .null
            try withContainer(&elements[index], at: rest, path: path, body)
            value = .array(elements)
        default:
            throw JSONPatchError(path: path, message: "'\(token)' is inside a scalar")
        }
    }

    private static func applyLast(_ op: PatchOp, token: String, to container: inout JSONValue, path: String) throws(JSONPatchError) {
        switch container {
        case .object(var members):
            container = .null
            defer { container = .object(members) }
            switch op {
            case .add(_, let value):
                members[token] = value
            case .remove:
                guard members.removeValue(forKey: token) != nil else {
                    throw JSONPatchError(path: path, message: "no member '\(token)' to remove")
                }
            case .replace(_, let value):
                guard members[token] != nil else {
                    throw JSONPatchError(path: path, message: "no member '\(token)' to replace")
                }
                members[token] = value
            }
        case .array(var elements):
            container = .null
            defer { container = .array(elements) }
            switch op {
            case .add(_, let value):
                if token == "-" {
                    elements.append(value)
                } else if let index = arrayIndex(token), index <= elements.count {
                    elements.insert(value, at: index)
                } else {
                    throw JSONPatchError(path: path, message: "array index '\(token)' out of range for add")
                }
            case .remove:
                guard let index = arrayIndex(token), index < elements.count else {
                    throw JSONPatchError(path: path, message: "array index '\(token)' out of range for remove")
                }
                elements.remove(at: index)
            case .replace(_, let value):
                guard let index = arrayIndex(token), index < elements.count else {
                    throw JSONPatchError(path: path, message: "array index '\(token)' out of range for replace")
                }
                elements[index] = value
            }
        default:
            throw JSONPatchError(path: path, message: "parent is not an object or array")
        }
    }

    /// RFC 6901 array index: `0` or digits without a leading zero.
    private static func arrayIndex(_ token: String) -> Int? {
        let utf8 = token.utf8
        guard let first = utf8.first, utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        if first == 0x30 && utf8.count > 1 { return nil }
        return Int(token)
    }
}

extension PatchOp {
    /// Appends the wire form as compact JSON with members in the order `op`, `path`, `value`,
    /// without building an intermediate `JSONValue`; for the patch fan-out hot path.
    public func write(to buffer: inout [UInt8], sortedKeys: Bool = false) {
        let name: String
        let value: JSONValue?
        switch self {
        case .add(_, let payload): name = #"{"op":"add","path":"#; value = payload
        case .remove: name = #"{"op":"remove","path":"#; value = nil
        case .replace(_, let payload): name = #"{"op":"replace","path":"#; value = payload
        }
        buffer.append(contentsOf: name.utf8)
        JSONValue.writeQuotedString(path, into: &buffer)
        if let value {
            buffer.append(contentsOf: #","value":"#.utf8)
            value.write(to: &buffer, sortedKeys: sortedKeys)
        }
        buffer.append(0x7D)
    }
}
