/// A JSON document (RFC 8259) as a plain value.
///
/// Integer literals that fit `Int` are kept as `.int` so ids, versions and points round-trip
/// exactly; everything else numeric is `.double`. Equality is structural and does not unify
/// `.int(1)` with `.double(1.0)`: a patch turning one into the other is a real change on the wire.
/// Nor does it unify two spellings of one text (`"é"` and `"e\u{301}"`), which Swift's `String`
/// equality does: string values are equal when their UTF-8 bytes are, as on the wire (a diff
/// that took the new spelling for the old would leave clients holding other bytes than the
/// server). Object keys are a dictionary's, so two spellings of one key are one key: views'
/// keys are ASCII ids and field names, where the two equalities agree.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    // `hash(into:)` stays synthesized: `String`'s hash is equal for canonically equivalent
    // strings, so values equal here (byte for byte) still hash alike.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): sameBytes(a, b)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        let left = a.utf8.span, right = b.utf8.span
        // One string's storage shared by both (a view's unchanged text): no need to look.
        if left.isIdentical(to: right) { return true }
        guard left.count == right.count else { return false }
        for index in 0..<left.count where left[index] != right[index] { return false }
        return true
    }
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
