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
extension JSONValue {
    public func serialized(sortedKeys: Bool = false) -> String { fatalError("placeholder") }
    public func write(to buffer: inout [UInt8], sortedKeys: Bool = false) { fatalError("placeholder") }
    public static func writeQuotedString(_ s: String, into buffer: inout [UInt8]) { fatalError("placeholder") }
    public static func writeInt(_ value: Int, into buffer: inout [UInt8]) { fatalError("placeholder") }
}
public struct JSONParseError: Error, Sendable, CustomStringConvertible { public var description: String { "" } }
public enum JSONParser { public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue { fatalError() } }
public enum PatchOp: Sendable, Hashable { case add(path: String, value: JSONValue), remove(path: String), replace(path: String, value: JSONValue)
  public var json: JSONValue { fatalError() } }
public enum JSONPatch { public static func diff(_ old: JSONValue, _ new: JSONValue, path: String = "") -> [PatchOp] { fatalError() } }
