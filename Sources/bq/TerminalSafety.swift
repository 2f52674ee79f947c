import JSON

extension String {
    /// This text as a terminal may show it on one line when someone else wrote it: control
    /// characters become caret escapes (`^[`, `^G`, `^J`), and C1 controls and the
    /// bidirectional controls become `<U+202E>`-style escapes. A dare's title or a proof is typed
    /// by another player and would otherwise reach this terminal as commands (recolour, clear
    /// the screen, ring the bell, set the window title), show text in another order, or, with a
    /// newline, forge a line of its own on the board.
    var terminalSafe: String { escapedForTerminal(keepingNewlines: false) }

    /// The same for text of several lines (a description, a proof, a gift's text): newlines
    /// stay (tabs and carriage returns are escaped still), and `wrapped` indents every line, so
    /// none starts at the margin where the program's own lines do.
    var terminalSafeLines: String { escapedForTerminal(keepingNewlines: true) }

    /// A protocol line as `bq play --json` prints it. A line of JSON stays the same JSON to a
    /// program reading it, with what a terminal would act on or show out of order written as
    /// `\u` escapes (JSON escapes the other control characters in its strings itself, and allows
    /// none outside them but white space); a line that is not JSON (a faulty server's, something
    /// else on the port) is escaped as text.
    var jsonLineTerminalSafe: String {
        guard (try? JSONParser.parse(Array(utf8))) != nil else { return terminalSafe }
        guard unicodeScalars.contains(where: { Self.drivesTerminal($0, keepingNewlines: false) }) else { return self }
        var shown = ""
        for scalar in unicodeScalars {
            if scalar.value < 0x20 {
                // White space between tokens (a tab, a carriage return): a space means the same.
                shown += " "
            } else if Self.drivesTerminal(scalar, keepingNewlines: false) {
                shown += "\\u" + Self.fourHexDigits(scalar)
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// The scalar's number in upper-case hexadecimal, at least four digits.
    private static func fourHexDigits(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: Swift.max(0, 4 - hex.count)) + hex
    }

    private static func drivesTerminal(_ scalar: Unicode.Scalar, keepingNewlines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A: return !keepingNewlines
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional marks, embeddings, overrides and isolates.
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        // The line and paragraph separators (a line break to some terminals and viewers),
        // and the byte-order mark, which shows as nothing.
        case 0x2028, 0x2029, 0xFEFF: return true
        default: return false
        }
    }

    private func escapedForTerminal(keepingNewlines: Bool) -> String {
        func needsEscape(_ scalar: Unicode.Scalar) -> Bool { Self.drivesTerminal(scalar, keepingNewlines: keepingNewlines) }
        guard unicodeScalars.contains(where: needsEscape) else { return self }
        var shown = ""
        shown.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            guard needsEscape(scalar) else {
                shown.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x00...0x1F: shown += "^" + String(UnicodeScalar(UInt8(scalar.value + 0x40)))
            case 0x7F: shown += "^?"
            default: shown += "<U+" + Self.fourHexDigits(scalar) + ">"
            }
        }
        return shown
    }
}

extension JSONValue {
    /// The members whose text may run over several lines: descriptions, proofs and gifts.
    private static let textOfLines: Set = ["description", "text"]

    /// This value with every string in it, member names included, made `terminalSafe` (or
    /// `terminalSafeLines` in the members that hold text of several lines): for values from the
    /// server that `bq` lays out for a person.
    var terminalSafe: JSONValue { safeForTerminal(lines: false) }

    private func safeForTerminal(lines: Bool) -> JSONValue {
        switch self {
        case .string(let text): return .string(lines ? text.terminalSafeLines : text.terminalSafe)
        case .array(let items): return .array(items.map { $0.safeForTerminal(lines: lines) })
        case .object(let members):
            var safe: [String: JSONValue] = [:]
            safe.reserveCapacity(members.count)
            for (key, value) in members { safe[key.terminalSafe] = value.safeForTerminal(lines: Self.textOfLines.contains(key)) }
            return .object(safe)
        default: return self
        }
    }
}
