import CLibUV

/// A libuv failure: the negative status code libuv returned and the call that returned it.
public struct UVError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libuv's negative error code, e.g. `UV_EADDRINUSE.rawValue`.
    public let code: Int32
    /// The libuv call (and, where it helps, its argument), e.g. `uv_tcp_bind 127.0.0.1:4747`.
    public let operation: String
    /// Extra context that the code alone cannot carry, e.g. which handles keep a loop busy.
    public let detail: String

    public init(code: Int32, operation: String, detail: String = "") {
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    /// libuv's symbolic name for the code, e.g. `EADDRINUSE`.
    public var name: String { Self.text(of: code, uv_err_name_r) }

    /// For example `uv_tcp_bind 127.0.0.1:4747: address already in use (EADDRINUSE)`.
    public var description: String { "\(operation): \(reason)" }

    /// The description without the operation, e.g. `address already in use (EADDRINUSE)`.
    public var reason: String {
        let base = "\(Self.text(of: code, uv_strerror_r)) (\(name))"
        return detail.isEmpty ? base : "\(base): \(detail)"
    }

    /// The text libuv gives for `code`, written into a buffer of ours: `uv_err_name` and
    /// `uv_strerror` return a fresh allocation, for the caller to free, for a code they do not
    /// know (an errno passed through). The buffer lives on this call's stack; libuv writes it
    /// within the call, and the String copies it before it goes.
    private static func text(of code: Int32,
                             _ render: (Int32, UnsafeMutablePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer in
            buffer.initialize(repeating: 0)
            _ = render(code, buffer.baseAddress, buffer.count)
            return String(cString: buffer.baseAddress!)
        }
    }

    /// True when the code is `UV_ECANCELED`: the request was dropped because its handle closed.
    public var isCancelled: Bool { code == UV_ECANCELED.rawValue }
    /// A bind to an address this machine does not have.
    public var isAddressNotAvailable: Bool { code == UV_EADDRNOTAVAIL.rawValue }
    /// A host name the resolver knows nothing of (not a failure to reach the resolver).
    public var isUnknownHost: Bool { code == UV_EAI_NONAME.rawValue }
}

/// Turns a libuv status into a typed throw; libuv reports failure as a negative return value.
@inline(__always)
func check(_ status: Int32, _ operation: @autoclosure () -> String) throws(UVError) {
    if status < 0 { throw UVError(code: status, operation: operation()) }
}
