/// Milliseconds since the Unix epoch, UTC. The domain never reads a clock: every
/// time arrives inside a command's context and is stored in the events it produces.
public typealias Millis = Int64

public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
    case birthday, friend, organizer

    /// Friends and the organizer write dares; the organizer is a friend with admin rights.
    public var isFriend: Bool { self != .birthday }
}

/// Who caused an event. `system` is the seeder.
public enum Actor: Sendable, Hashable {
    case character(String)
    case admin
    case system

    /// The text the event log stores in its `actor` column.
    public var logName: String {
        switch self {
        case .character(let id): return id
        case .admin: return "admin"
        case .system: return "system"
        }
    }

    public init(logName: String) {
        switch logName {
        case "admin": self = .admin
        case "system": self = .system
        default: self = .character(logName)
        }
    }
}

/// Who is looking at the game: a character, or the organizer's admin console.
public enum Viewer: Sendable, Hashable {
    case character(String)
    case admin
}

public enum Difficulty: String, Sendable, Hashable, Codable, CaseIterable {
    case easy, medium, hard
}

public enum Category: String, Sendable, Hashable, Codable, CaseIterable {
    case physical, social, creative, sentimental, adventure
}

public enum RewardType: String, Sendable, Hashable, Codable, CaseIterable {
    case text, image, audio, video

    /// The tiered default costs of GAME.md: a bigger gift costs more points.
    public var defaultCost: Int {
        switch self {
        case .text, .image: return 50
        case .audio: return 75
        case .video: return 100
        }
    }
}

/// Which half of a 2-in-1 challenge was done. Plain challenges only have `a`.
public enum ChallengeOption: String, Sendable, Hashable, Codable, CaseIterable {
    case a, b
}

public enum Proof: Sendable, Hashable, Codable {
    case photo(url: String)
    case text(String)
    case done

    public var kind: String {
        switch self {
        case .photo: return "photo"
        case .text: return "text"
        case .done: return "done"
        }
    }
}

/// The limits GAME.md and PROTOCOL.md put on what people type. The protocol layer
/// checks them first (to name the field); the domain checks them again because
/// it must never hold a state the rules forbid, whoever called it.
public enum Limits {
    public static let title = 1...120
    public static let description = 1...2_000
    public static let proofText = 1...2_000
    public static let proofURL = 1...2_000
    public static let reason = 1...200
    public static let device = 1...128
    public static let day = 1...366
    public static let challengePoints = 1...1_000
    public static let rewardCost = 0...1_000
    public static let secretPoints = [25, 50, 75, 100]
    /// "25, 50, 75 or 100", for messages.
    public static var secretPointsSpelled: String {
        secretPoints.dropLast().map(String.init).joined(separator: ", ") + " or \(secretPoints.last!)"
    }
    public static let maxAdjustment = 1_000_000_000
    /// The most points a game may earn in all: 2^53 - 1, the largest whole number every JSON
    /// client reads exactly. Adjustments stop there; challenges (at most 1,000 points each, a few
    /// hundred of them) cannot carry a total from there to where the log's replay would overflow.
    public static let maxEarned = 9_007_199_254_740_991
    /// The tokens one device may hold for a character: a claim beyond them ends the oldest.
    /// Claims need no sign-in, and every token would otherwise be kept (in memory and in every
    /// snapshot) for good.
    public static let tokensPerCharacter = 1_000
    public static let name = 1...120
    public static let tagline = 1...200
    public static let teaser = 1...200
    public static let contentText = 0...10_000
    public static let contentURLs = 0...10
    public static let contentURL = 1...2_000
    public static let funFacts = 0...20
    public static let funFact = 1...200
}

extension Limits {
    /// How many regular challenges and how many rewards a game may hold (the seed has 15 and 9).
    /// Every view carries all of them, and every `state`, snapshot and rebuilt past view costs
    /// in proportion: without a bound, an organizer's script could make each of them megabytes.
    public static let maxChallenges = 100
    public static let maxRewards = 100

    // The bounds below are the protocol's, not the game's: Domain never reads them. They live
    // here, beside the game's, so that the decoder, the server's configuration and `bq` (which
    // reaches the wire only through the Client library) read one list.
    public static let idempotencyKey = 1...128
    public static let gameName = 1...64
    /// Ids of characters, challenges and rewards, in bytes (`isValidID`).
    public static let idBytes = 1...32
    /// A PIN as the seed sets it: digits only.
    public static let seedPINDigits = 4...8
    /// A PIN as a `claim` may send it: longer than any seed's, so that a client's own PIN
    /// field is never the reason for `bad_request`.
    public static let claimPIN = 1...32
    public static let adminKey = 1...1024
    /// Entries one `timeline` or `events` read may ask for, and what it gets without `limit`.
    public static let timelinePage = 1...500
    public static let eventsPage = 1...1000
    public static let defaultPage = 100
}

extension String {
    /// The length every limit "in characters" counts, in the seed, the rules and the protocol
    /// alike: Unicode code points, as most JSON libraries count. A count of what a screen
    /// shows as one letter would let one "character" carry thousands of combining marks.
    public var codePointCount: Int {
        // A code point starts at every byte of its UTF-8 but the continuation bytes (10xxxxxx):
        // counting those is a plain pass over the bytes, not a decoding of every scalar.
        utf8.reduce(0) { count, byte in byte & 0xC0 == 0x80 ? count : count + 1 }
    }

    /// Why this text does not fit `range` (counted in code points), or nil. Text for people
    /// that must be there (a range from 1) must also show something: a title of three spaces
    /// or of a zero-width space is a blank row on every board. (Identifiers, such as a device,
    /// are not text for people: `allowingBlank`.)
    public func lengthProblem(_ range: ClosedRange<Int>, allowingBlank: Bool = false) -> String? {
        let count = codePointCount
        guard range.contains(count) else { return "must be \(range.lowerBound) to \(range.upperBound) characters, got \(count)" }
        if !allowingBlank, range.lowerBound > 0, isBlank { return "must not be blank" }
        return nil
    }

    /// Nothing but white space and invisible formatting characters.
    public var isBlank: Bool {
        // Checked on every text of every request: any ASCII character but a space or a control
        // from tab to carriage return settles it without the Unicode property tables, which
        // only text with no such character needs.
        var allASCII = true
        for byte in utf8 {
            if byte >= 0x80 {
                allASCII = false
            } else if byte != 0x20 && !(0x09...0x0D).contains(byte) {
                return false
            }
        }
        return allASCII || unicodeScalars.allSatisfy(\.isBlank)
    }

    /// What `isWebLink` asks of a link, for messages ("must be \(String.webLinkRule)").
    public static let webLinkRule = "an http or https link with a host, and no spaces or invisible characters"

    /// Whether this is a link a player's device can open: `http://` or `https://`, then a host
    /// (after any user info, before any port), with no spaces, control or invisible formatting
    /// characters anywhere (`http://` alone passed once, and a right-to-left override can make
    /// a link read as another).
    public var isWebLink: Bool {
        let rest: Substring
        if hasPrefix("https://") {
            rest = dropFirst(8)
        } else if hasPrefix("http://") {
            rest = dropFirst(7)
        } else {
            return false
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        guard let first = hostAndPort.first, first != ":" else { return false }
        return !unicodeScalars.contains { scalar in
            let category = scalar.properties.generalCategory
            return scalar.properties.isWhitespace || category == .control || category == .format
        }
    }
}

extension Unicode.Scalar {
    /// White space, or an invisible formatting character (a zero-width space, a direction mark).
    var isBlank: Bool { properties.isWhitespace || properties.generalCategory == .format }
}
