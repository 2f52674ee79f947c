import JSON

/// A request's members as the decoder reads them: a parsed object's dictionary, or the list
/// `JSONParser.parseObjectMembers` gives for a line of the wire.
protocol RequestMembers {
    subscript(_ key: String) -> JSONValue? { get }
    /// Every member but `id`, `idem` and `expect`, sorted and compact, whole numbers written as
    /// integers (a retry may spell 5 as 5.0): what a retry with the same key must match (the
    /// request's fingerprint).
    func writeCanonical(into buffer: inout [UInt8])
}

/// The members no fingerprint includes: the request's own id, the key itself, and the version
/// the client expected, which a retry may update.
private func isOutsideFingerprint(_ key: String) -> Bool { key == "id" || key == "idem" || key == "expect" }

extension Dictionary: RequestMembers where Key == String, Value == JSONValue {
    func writeCanonical(into buffer: inout [UInt8]) {
        let spelled = wholeNumbersAsIntegers(.object(self))?.objectValue ?? self
        JSONValue.writeSortedObject(spelled, omitting: isOutsideFingerprint, into: &buffer)
    }
}

/// The members in the order written, names distinct. A request has a handful: finding one by
/// comparing names costs less than hashing every name into a dictionary.
struct MemberList: RequestMembers {
    let list: [(key: String, value: JSONValue)]

    subscript(_ key: String) -> JSONValue? {
        for member in list where member.key == key { return member.value }
        return nil
    }

    func writeCanonical(into buffer: inout [UInt8]) {
        var spelled = list
        for index in spelled.indices {
            if let integers = wholeNumbersAsIntegers(spelled[index].value) { spelled[index].value = integers }
        }
        JSONValue.writeSortedObject(spelled, omitting: isOutsideFingerprint, into: &buffer)
    }
}
