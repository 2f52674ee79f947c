/// The line a person is typing, edited by `bq` rather than by the terminal driver, so that a
/// line printed meanwhile (live news, a lost connection) can go above the typing and the
/// typing be shown again below it (see `Terminal.readLine(prompt:)`).
///
/// Keys are put in at the cursor. Left and Right (Ctrl-B, Ctrl-F) move it a character, with Ctrl
/// or Alt (Alt-B, Alt-F) a word; Home and End (Ctrl-A, Ctrl-E) to the ends. Backspace takes back
/// the character before it, Delete (and Ctrl-D) the one under it, Ctrl-W the word before it,
/// Ctrl-U everything before it and Ctrl-K everything from it on; Enter ends the line wherever
/// the cursor is, Ctrl-D on an empty line ends the input. Up and Down bring back the lines
/// entered before (`history`), and Down past the newest the line that was being typed. Where the
/// terminal takes no cursor moves (`movesCursor` false), the cursor stays at the end and the
/// keys that would move it are read and ignored. Fed one byte at a time; no I/O here.
struct LineEdit {
    /// What a byte typed does to the screen.
    enum Action: Equatable {
        /// Nothing to show: a key ignored, or part of one.
        case none
        /// These bytes were added at the end of the line: show them as they are.
        case echo([UInt8])
        /// The line or the cursor changed (or Ctrl-L asked for it again): show it anew.
        case redraw
        /// Enter: the line typed.
        case done(String)
        /// Ctrl-D on an empty line.
        case endOfInput
        /// Ctrl-C.
        case interrupt
        /// Ctrl-Z.
        case suspend
    }

    private(set) var typed: [UInt8] = []
    /// Where keys go in: a byte offset into `typed`, at the start of a character.
    private(set) var cursor = 0
    private let movesCursor: Bool
    private var escape = Escape.none
    /// Lines entered before, oldest first.
    private let history: [[UInt8]]
    /// Which of them is shown (Up was pressed), and what was typed before it was.
    private var recalled: (index: Int, draft: [UInt8], draftCursor: Int)?

    init(history: [String] = [], movesCursor: Bool = true) {
        self.history = history.map { Array($0.utf8) }
        self.movesCursor = movesCursor
    }

    private enum Escape: Equatable {
        case none
        /// ESC read: a key's sequence (`ESC [` or `ESC O`) or Alt with a key follows.
        case started
        /// Inside a sequence, until its final byte; its parameter bytes so far.
        case sequence([UInt8])
    }

    var text: String { String(decoding: typed, as: UTF8.self) }
    /// What is shown before the cursor.
    var textBeforeCursor: String { String(decoding: typed[..<cursor], as: UTF8.self) }
    /// The character the cursor is on; nil at the end of the line.
    var characterAtCursor: Character? {
        cursor < typed.count ? String(decoding: typed[cursor..<nextBoundary(after: cursor)], as: UTF8.self).first : nil
    }

    /// An ESC was read and what follows it may still be on its way.
    var isAwaitingEscape: Bool { escape == .started }
    /// A character is being put in mid-line and still lacks bytes: not to be drawn yet.
    var isInsideACharacter: Bool { cursor > 0 && cursor < typed.count && endsInsideACharacter(cursor) }

    /// Nothing followed the ESC in time: it was the Escape key alone, and the next key is a key.
    mutating func escapeAlone() {
        if escape == .started { escape = .none }
    }

    mutating func feed(_ byte: UInt8) -> Action {
        if escape != .none {
            if byte == 0x1B {
                escape = .started
                return .none
            }
            // A control key is never part of a sequence: it cancels one and acts as itself.
            if byte < 0x20 || byte == 0x7F {
                escape = .none
            } else if escape == .started {
                escape = byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") ? .sequence([]) : .none
                // Alt-B and Alt-F: a word back and forward.
                switch byte {
                case UInt8(ascii: "b"): return move(to: wordStart(before: cursor))
                case UInt8(ascii: "f"): return move(to: wordEnd(after: cursor))
                default: return .none
                }
            } else if case .sequence(let parameters) = escape {
                // Parameters and intermediates are 0x20...0x3F; the final byte ends the sequence.
                guard (0x40...0x7E).contains(byte) else {
                    // No key has a longer one: the rest of a longer one is read and dropped.
                    if parameters.count < 8 { escape = .sequence(parameters + [byte]) }
                    return .none
                }
                escape = .none
                return key(final: byte, parameters: parameters)
            }
        }
        switch byte {
        case 0x1B:
            escape = .started
            return .none
        case 0x0D, 0x0A:
            defer {
                typed = []
                cursor = 0
                recalled = nil
            }
            return .done(text)
        case 0x03: return .interrupt
        case 0x1A: return .suspend
        case 0x04:
            if typed.isEmpty { return .endOfInput }
            return remove(cursor..<nextBoundary(after: cursor))
        case 0x7F, 0x08: return remove(previousBoundary(before: cursor)..<cursor)
        case 0x15: return remove(0..<cursor)
        case 0x0B: return remove(cursor..<typed.count)
        case 0x17: return remove(wordStart(before: cursor)..<cursor)
        case 0x01: return move(to: 0)
        case 0x05: return move(to: typed.count)
        case 0x02: return move(to: previousBoundary(before: cursor))
        case 0x06: return move(to: nextBoundary(after: cursor))
        case 0x0C: return .redraw
        case 0x09:
            // Words are split at tabs as at spaces; a tab's width on screen is the terminal's guess.
            return insert(0x20)
        case 0x00..<0x20:
            return .none
        default:
            return insert(byte)
        }
    }

    /// The end of a key's sequence (`ESC [ parameters final`, or `ESC O final`).
    private mutating func key(final: UInt8, parameters: [UInt8]) -> Action {
        // Ctrl or Alt held (`ESC [ 1 ; 5 D`): Left and Right go a word at a time.
        let byWord = parameters.split(separator: UInt8(ascii: ";")).dropFirst().first
            .map { ["3", "5", "7"].contains(String(decoding: $0, as: UTF8.self)) } ?? false
        switch (final, String(decoding: parameters, as: UTF8.self)) {
        // Up and Down, with or without modifiers or in application mode (`ESC O A`).
        case (UInt8(ascii: "A"), _): return recall(by: -1)
        case (UInt8(ascii: "B"), _): return recall(by: 1)
        case (UInt8(ascii: "C"), _): return move(to: byWord ? wordEnd(after: cursor) : nextBoundary(after: cursor))
        case (UInt8(ascii: "D"), _): return move(to: byWord ? wordStart(before: cursor) : previousBoundary(before: cursor))
        case (UInt8(ascii: "H"), _), (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"): return move(to: 0)
        case (UInt8(ascii: "F"), _), (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"): return move(to: typed.count)
        case (UInt8(ascii: "~"), "3"): return remove(cursor..<nextBoundary(after: cursor))
        default: return .none
        }
    }

    /// A typed byte, put in at the cursor: shown as it is at the end, else with the line anew
    /// once the character it belongs to is whole.
    private mutating func insert(_ byte: UInt8) -> Action {
        typed.insert(byte, at: cursor)
        cursor += 1
        if cursor == typed.count { return .echo([byte]) }
        return endsInsideACharacter(cursor) ? .none : .redraw
    }

    /// Whether the bytes before `offset` end with a UTF-8 sequence still missing bytes.
    private func endsInsideACharacter(_ offset: Int) -> Bool {
        var start = offset - 1
        while start > max(0, offset - 4), typed[start] & 0xC0 == 0x80 { start -= 1 }
        let lead = typed[start]
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        return offset - start < length
    }

    private mutating func remove(_ range: Range<Int>) -> Action {
        guard !range.isEmpty else { return .none }
        typed.removeSubrange(range)
        cursor = range.lowerBound
        return .redraw
    }

    private mutating func move(to place: Int) -> Action {
        guard movesCursor, place != cursor else { return .none }
        cursor = place
        return .redraw
    }

    /// Where the character before `offset` starts: a whole character's bytes (an emoji with its
    /// modifiers) where the text is UTF-8, else one scalar's.
    private func previousBoundary(before offset: Int) -> Int {
        guard offset > 0 else { return 0 }
        if let valid = String(validating: typed[..<offset], as: UTF8.self), let last = valid.last {
            return offset - String(last).utf8.count
        }
        var start = offset - 1
        while start > 0, typed[start] & 0xC0 == 0x80 { start -= 1 }
        return start
    }

    /// Where the character at `offset` ends (as `previousBoundary`).
    private func nextBoundary(after offset: Int) -> Int {
        guard offset < typed.count else { return typed.count }
        if let valid = String(validating: typed[offset...], as: UTF8.self), let first = valid.first {
            return offset + String(first).utf8.count
        }
        var end = offset + 1
        while end < typed.count, typed[end] & 0xC0 == 0x80 { end += 1 }
        return end
    }

    /// The start of the word before `offset` (spaces before it skipped).
    private func wordStart(before offset: Int) -> Int {
        var start = offset
        while start > 0, typed[start - 1] == 0x20 { start -= 1 }
        while start > 0, typed[start - 1] != 0x20 { start -= 1 }
        return start
    }

    /// The end of the word after `offset` (spaces before it skipped).
    private func wordEnd(after offset: Int) -> Int {
        var end = offset
        while end < typed.count, typed[end] == 0x20 { end += 1 }
        while end < typed.count, typed[end] != 0x20 { end += 1 }
        return end
    }

    /// Shows the line `step` places newer (Down) or older (Up) in the history than the one
    /// shown; past the newest, the draft. Nothing older than the oldest.
    private mutating func recall(by step: Int) -> Action {
        let current = recalled?.index ?? history.count
        let next = current + step
        guard next >= 0, next <= history.count, next != current else { return .none }
        let (draft, draftCursor) = recalled.map { ($0.draft, $0.draftCursor) } ?? (typed, cursor)
        if next == history.count {
            // The typing back as it was left, its cursor included.
            typed = draft
            cursor = draftCursor
            recalled = nil
        } else {
            typed = history[next]
            cursor = typed.count
            recalled = (next, draft, draftCursor)
        }
        return .redraw
    }
}
