/// The line a person is typing, edited by `bq` rather than by the terminal driver, so that a
/// line printed meanwhile (live news, a lost connection) can go above the typing and the
/// typing be shown again below it (see `Terminal.readLine(prompt:)`).
///
/// Only the end of the line is edited: keys append, Backspace takes back the last character,
/// Ctrl-U the whole line, Ctrl-W the last word; Enter ends the line, Ctrl-D on an empty line
/// ends the input. Up and Down bring back the lines entered before (`history`), and Down past
/// the newest the line that was being typed; the other keys that send escape sequences (Left,
/// Right, Home, ...) are read and ignored. Fed one byte at a time; no I/O here.
struct LineEdit {
    /// What a byte typed does to the screen.
    enum Action: Equatable {
        /// Nothing to show: a key ignored, or part of one.
        case none
        /// These bytes were added at the end of the line: show them as they are.
        case echo([UInt8])
        /// The line changed (or Ctrl-L asked for it again): show it anew.
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
    private var escape = Escape.none
    /// Lines entered before, oldest first.
    private let history: [[UInt8]]
    /// Which of them is shown (Up was pressed), and what was typed before it was.
    private var recalled: (index: Int, draft: [UInt8])?

    init(history: [String] = []) {
        self.history = history.map { Array($0.utf8) }
    }

    private enum Escape {
        case none
        /// ESC read: a key's sequence (`ESC [` or `ESC O`) or Alt with a key follows.
        case started
        /// Inside a sequence, until its final byte.
        case sequence
    }

    var text: String { String(decoding: typed, as: UTF8.self) }

    /// An ESC was read and what follows it may still be on its way.
    var isAwaitingEscape: Bool { escape == .started }

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
                escape = byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") ? .sequence : .none
                return .none
            } else {
                // Parameters and intermediates are 0x20...0x3F; the final byte ends the sequence.
                guard (0x40...0x7E).contains(byte) else { return .none }
                escape = .none
                // Up and Down, with or without modifiers (`ESC [ 1 ; 5 A`) or in application mode (`ESC O A`).
                switch byte {
                case UInt8(ascii: "A"): return recall(by: -1)
                case UInt8(ascii: "B"): return recall(by: 1)
                default: return .none
                }
            }
        }
        switch byte {
        case 0x1B:
            escape = .started
            return .none
        case 0x0D, 0x0A:
            defer {
                typed = []
                recalled = nil
            }
            return .done(text)
        case 0x03: return .interrupt
        case 0x1A: return .suspend
        case 0x04: return typed.isEmpty ? .endOfInput : .none
        case 0x7F, 0x08:
            guard !typed.isEmpty else { return .none }
            // The last character's bytes; in text that is not all UTF-8, the last scalar's.
            if let valid = String(validating: typed, as: UTF8.self), let last = valid.last {
                typed.removeLast(String(last).utf8.count)
            } else {
                while let removed = typed.popLast(), removed & 0xC0 == 0x80, !typed.isEmpty {}
            }
            return .redraw
        case 0x15:
            guard !typed.isEmpty else { return .none }
            typed = []
            return .redraw
        case 0x17:
            guard !typed.isEmpty else { return .none }
            while typed.last == 0x20 { typed.removeLast() }
            while let last = typed.last, last != 0x20 { typed.removeLast() }
            return .redraw
        case 0x0C: return .redraw
        case 0x09:
            // Words are split at tabs as at spaces; a tab's width on screen is the terminal's guess.
            typed.append(0x20)
            return .echo([0x20])
        case 0x00..<0x20:
            return .none
        default:
            typed.append(byte)
            return .echo([byte])
        }
    }

    /// Shows the line `step` places newer (Down) or older (Up) in the history than the one
    /// shown; past the newest, the draft. Nothing older than the oldest.
    private mutating func recall(by step: Int) -> Action {
        let current = recalled?.index ?? history.count
        let next = current + step
        guard next >= 0, next <= history.count, next != current else { return .none }
        let draft = recalled?.draft ?? typed
        if next == history.count {
            typed = draft
            recalled = nil
        } else {
            typed = history[next]
            recalled = (next, draft)
        }
        return .redraw
    }
}
