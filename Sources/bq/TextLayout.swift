/// Laying text out in a terminal's columns: styles, widths that count wide and combining
/// characters, padding, cutting and wrapping.

/// ANSI styling that turns itself off when colour is not wanted.
struct Style: Sendable {
    let enabled: Bool

    private func wrap(_ code: String, _ text: String) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func bold(_ text: String) -> String { wrap("1", text) }
    func dim(_ text: String) -> String { wrap("2", text) }
    func red(_ text: String) -> String { wrap("31", text) }
    func green(_ text: String) -> String { wrap("32", text) }
    func yellow(_ text: String) -> String { wrap("33", text) }
    func blue(_ text: String) -> String { wrap("34", text) }
    func magenta(_ text: String) -> String { wrap("35", text) }
    func cyan(_ text: String) -> String { wrap("36", text) }
}

/// Pads `text` with spaces to `width` terminal columns (never cuts).
func padded(_ text: String, _ width: Int) -> String {
    let columns = text.terminalColumns
    return columns >= width ? text : text + String(repeating: " ", count: width - columns)
}

/// Exactly `width` terminal columns: padded, or cut with an ellipsis, so the columns after it
/// stay put.
func fitted(_ text: String, _ width: Int) -> String {
    guard text.terminalColumns > width else { return padded(text, width) }
    var cut = ""
    var used = 0
    for character in text {
        let columns = character.terminalColumns
        if used + columns > width - 1 { break }
        cut.append(character)
        used += columns
    }
    return padded(cut + "…", width)
}

extension Character {
    /// The columns a terminal gives this character: 2 for an emoji shown as a picture and for
    /// the wide East Asian scripts, 0 for a mark that combines with nothing, else 1. Titles are
    /// typed on phones, so "🎂 Cake" and "誕生日" are to be expected on a board whose columns
    /// must line up.
    var terminalColumns: Int {
        guard let first = unicodeScalars.first else { return 0 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let asPicture = unicodeScalars.contains { $0.properties.isEmojiPresentation }
            || (first.properties.isEmoji && unicodeScalars.contains("\u{FE0F}"))
        if asPicture { return 2 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}

extension String {
    /// The columns a terminal gives this text (see `Character.terminalColumns`).
    var terminalColumns: Int { reduce(0) { $0 + $1.terminalColumns } }

    /// This text without its ANSI escape sequences (`ESC [ ... letter`): what a terminal shows
    /// of a styled prompt.
    var withoutEscapes: String {
        guard contains("\u{1B}") else { return self }
        var shown = ""
        var inSequence = false
        for scalar in unicodeScalars {
            if inSequence {
                if (0x40...0x7E).contains(scalar.value), scalar != "[" { inSequence = false }
            } else if scalar == "\u{1B}" {
                inSequence = true
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}

/// The fewest columns `wrapped` gives a line's text, however deep its indent.
let narrowestWrap = 20

/// `text` as lines starting with `indent`, each of its own lines broken between words to fit
/// `columns` when the terminal's width is known (a pipe gets them unbroken: scripts split on
/// newlines, not on widths).
func wrapped(_ text: String, indent: String, columns: Int?) -> [String] {
    let paragraphs = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard paragraphs.count == 1 else { return paragraphs.flatMap { wrapped(String($0), indent: indent, columns: columns) } }
    guard let columns else { return [indent + text] }
    let width = max(narrowestWrap, columns - indent.terminalColumns)
    var lines: [String] = []
    var current = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: true) {
        if !current.isEmpty, current.terminalColumns + 1 + String(word).terminalColumns > width {
            lines.append(indent + current)
            current = ""
        }
        current += (current.isEmpty ? "" : " ") + word
    }
    if !current.isEmpty || lines.isEmpty { lines.append(indent + current) }
    return lines
}

/// A help table: each command with what it does beside it, from column `column`, broken
/// between words to the screen's width (the terminal would break it mid-word); a command too
/// long for that has its description on the lines under it. A command with no
/// description (`what` empty) is broken between words like prose.
func helpTable(_ rows: [(command: String, what: String)], columns: Int?, column wide: Int = 29) -> [String] {
    // On a narrow screen the descriptions start just after the short commands, for room beside them.
    let short = rows.filter { !$0.what.isEmpty && $0.command.terminalColumns <= 16 }.map(\.command.terminalColumns).max() ?? 0
    let column = columns.map { $0 < wide + 30 ? min(wide, short + 4) : wide } ?? wide
    return rows.flatMap { row -> [String] in
        let command = "  " + row.command
        guard !row.what.isEmpty else { return wrapped(row.command, indent: "  ", columns: columns) }
        let gap = column - command.terminalColumns
        if gap >= 1, columns.map({ $0 - column >= narrowestWrap }) ?? true {
            // Beside the command, going on under its first line.
            var lines = wrapped(row.what, indent: String(repeating: " ", count: column), columns: columns)
            lines[0] = command + String(repeating: " ", count: gap) + lines[0].dropFirst(column)
            return lines
        }
        let under = columns.map { $0 - column >= narrowestWrap } ?? true ? String(repeating: " ", count: column) : "      "
        return wrapped(row.command, indent: "  ", columns: columns) + wrapped(row.what, indent: under, columns: columns)
    }
}
