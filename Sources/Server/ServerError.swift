/// Why the server cannot start: a message for the person who started it.
public enum ServerError: Error, CustomStringConvertible {
    case startup(String)

    public var description: String {
        switch self {
        case .startup(let message): return message
        }
    }
}
