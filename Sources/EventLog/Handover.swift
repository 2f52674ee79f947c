/// Moves a value that is not `Sendable` (a store, a connection) from the thread that opened it
/// to the thread that will own it, exactly once. The opening thread never touches the value
/// after creating the handover, and the new thread takes it before using it: the value is only
/// ever used by one thread at a time, which is what makes the unchecked conformance hold.
final class Handover<Value>: @unchecked Sendable {
    private var value: Value?

    init(_ value: Value) { self.value = value }

    func take() -> Value {
        guard let value else { preconditionFailure("a \(Value.self) was handed over twice") }
        self.value = nil
        return value
    }
}
