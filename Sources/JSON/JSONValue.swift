/// A JSON document (RFC 8259) as a plain value.
///
/// Integer literals that fit `Int` are kept as `.int` so ids, versions and points round-trip
/// exactly; everything else numeric is `.double`. Equality is structural and does not unify
/// `.int(1)` with `.double(1.0)`: a patch turning one into the other is a real change on the wire.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// A repeated key keeps its last value, matching the parser's rule for duplicate members.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension JSONValue {
    /// The member named `key` when this is an object that has it, otherwise `nil`.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The element at `index` when this is an array and the index is in range, otherwise `nil`.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The string payload of `.string`, otherwise `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The payload of `.int` only; a `.double` is never converted, even when integral.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The payload of `.bool`, otherwise `nil`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number as a `Double` for both `.int` and `.double`, otherwise `nil`.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The elements of `.array`, otherwise `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members of `.object`, otherwise `nil`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
