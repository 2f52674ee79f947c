// TEMPORARY stand-in until the JSON branch lands (same shape as the real API).
public enum JSONValue: Sendable, Hashable {
    case null, bool(Bool), int(Int), double(Double), string(String), array([JSONValue]), object([String: JSONValue])
    public subscript(key: String) -> JSONValue? { if case .object(let o) = self { return o[key] }; return nil }
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var intValue: Int? { if case .int(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let s) = self { return s }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let s) = self { return s }; return nil }
    public var objectValue: [String: JSONValue]? { if case .object(let s) = self { return s }; return nil }
    public var isNull: Bool { self == .null }
}
