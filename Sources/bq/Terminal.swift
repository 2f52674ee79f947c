import Foundation
import POSIXSupport

/// Where `bq play` and `bq admin` write: whole lines, one writer at a time (the reader thread
/// prints live updates while the main thread prints command results), never buffered, so a
/// pipe sees each line at once.
final class Terminal: @unchecked Sendable {
    let style: Style
    /// Guards the two file handles so lines from two threads never interleave, and `editing`.
    private let lock = NSLock()
    /// The line being typed, and the prompt before it, while `readLine(prompt:)` edits it.
    private var editing: Editing?
    /// The typing as it is on the screen: a character still being typed mid-line (its first
    /// bytes in `editing`) is not drawn yet, and clearing must measure what was.
    private var drawn: Editing?
    /// No more typing will be read (the process is ending): no prompt is drawn again.
    private var inputEnded = false
    /// `editing` changed since it was drawn, and is drawn once no more typing waits to be read:
    /// a paste is drawn once, not once per byte (each a clear and a draw of the whole line).
    private var redrawOwed = false
    /// Said before Ctrl-C ends the process.
    private var onInterrupt: (@Sendable () -> Void)?

    /// The lines entered at `readLine(prompt:remembered:)` with `remembered`, oldest first, for
    /// Up and Down to bring back. Only this session's, in memory: never written anywhere.
    private var history: [String] = []
    private static let historyLength = 200

    private struct Editing {
        let prompt: String
        var edit: LineEdit
    }

    init(colorAllowed: Bool) {
        let tty = Self.outputIsTerminal
        let environment = ProcessInfo.processInfo.environment
        let noColorEnv = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        // A terminal that says it takes no escape sequences would show them as text.
        style = Style(enabled: colorAllowed && tty && !noColorEnv && environment["TERM"] != "dumb")
    }

    /// The terminal's width when output goes to one (else `COLUMNS`, else nil: no limit, so a
    /// pipe gets whole rows).
    static var columns: Int? {
        if let columns = TerminalIO.columns { return columns }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// The terminal's height when output goes to one.
    static var rows: Int? { TerminalIO.rows }

    /// `body` runs when Ctrl-C is about to end the process, at the prompt or while a command
    /// runs: the last words of a session that leaves something behind (a change kept to be
    /// sent again, or one still waiting for its answer).
    func whenInterrupted(_ body: @escaping @Sendable () -> Void) {
        lock.withLock { onInterrupt = body }
        // The same words when Ctrl-C comes as the terminal's signal, while a command runs.
        RawInput.handInterrupts { [self] in lock.withLock { onInterrupt }?() }
    }

    /// Whether standard output goes to a terminal (not a file or a pipe).
    static let outputIsTerminal = isatty(STDOUT_FILENO) == 1

    /// Whether a person is typing (prompts and questions make sense).
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Whether typed lines are edited here (`LineEdit`), so that lines printed meanwhile go
    /// above them: a person at a terminal on both ends, and no `BQ_PLAIN_INPUT` (set to
    /// anything) asking for the terminal driver's own editing. A terminal that takes no cursor
    /// moves (`TERM=dumb`) is edited here too when it echoes the typing: the driver's editing
    /// would keep a line typed before some news, unseen, and send it with what is typed after.
    /// One that does not echo is a program holding the typing itself (an editor's shell buffer),
    /// and is left to it.
    static let editsLines: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return isatty(STDIN_FILENO) == 1 && outputIsTerminal && (movesCursor || TerminalIO.echoes)
            && (environment[plainInputVariable] ?? "").isEmpty
    }()

    /// Whether the terminal takes cursor moves: the typing is redrawn in place, else line by line.
    static let movesCursor = ProcessInfo.processInfo.environment["TERM"] != "dumb"

    static let plainInputVariable = "BQ_PLAIN_INPUT"

    func line(_ text: String = "") {
        lines([text])
    }

    /// Several lines at once: while a line is being typed, the typing is drawn again once below
    /// them all, not below each (on a terminal without cursor moves, a prompt between every two).
    func lines(_ texts: [String]) {
        guard !texts.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        aboveTheTyping { try? FileHandle.standardOutput.write(contentsOf: Data(texts.map { $0 + "\n" }.joined().utf8)) }
    }

    func error(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        aboveTheTyping { try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8)) }
    }

    /// Prints with `write`; while a line is being typed, in its place, and the typing below.
    /// Holding `lock`.
    private func aboveTheTyping(_ write: () -> Void) {
        guard let editing else { return write() }
        clear(drawn ?? editing)
        write()
        draw(editing)
    }

    // MARK: Editing a line

    /// Reads the next line typed after `prompt`; nil at the end of input. Edited here when
    /// `editsLines` (the prompt is drawn here then); otherwise read as the terminal driver
    /// gives it, after the prompt when `showPrompt` (a caller that prints its own passes false).
    /// `remembered`: a command line, kept for Up to bring back (answers to questions are not).
    func readLine(prompt: String, showPrompt: Bool = true, remembered: Bool = false) -> String? {
        guard Self.editsLines, RawInput.enter() else {
            if showPrompt { self.prompt(prompt) }
            return Swift.readLine(strippingNewline: true)
        }
        defer { RawInput.quiet() }
        lock.withLock {
            guard !inputEnded else { return }
            editing = Editing(prompt: prompt, edit: LineEdit(history: remembered ? history : [], movesCursor: Self.movesCursor))
            drawn = editing
            writeOut(prompt)
        }
        while true {
            guard let byte = TerminalIO.readByte() else {
                finishEditing()
                return nil
            }
            switch edit(with: byte) {
            case .none, .echo, .redraw:
                continue
            case .done(let line):
                finishEditing()
                if remembered { remember(line) }
                return line
            case .endOfInput:
                finishEditing()
                return nil
            case .interrupt:
                finishEditing()
                lock.withLock { onInterrupt }?()
                RawInput.interrupt()
            case .suspend:
                // Put away while stopped: a line printed meanwhile must not redraw it, twice.
                let stashed = lock.withLock { () -> Editing? in
                    defer {
                        editing = nil
                        drawn = nil
                    }
                    if let editing { clear(drawn ?? editing) }
                    return editing
                }
                RawInput.suspend()
                lock.withLock {
                    editing = stashed
                    if let stashed { draw(stashed) }
                }
            }
        }
    }

    /// Feeds one typed byte to the line and shows what it changed. An Escape key alone is told
    /// from the start of a key's sequence by the time the next byte takes to come (100 ms).
    private func edit(with byte: UInt8) -> LineEdit.Action {
        let (action, awaitingEscape) = lock.withLock { () -> (LineEdit.Action, Bool) in
            guard let before = editing else { return (.none, false) }
            var after = before
            let action = after.edit.feed(byte)
            editing = after
            switch action {
            case .echo(let bytes) where !redrawOwed:
                try? FileHandle.standardOutput.write(contentsOf: Data(bytes))
                drawn = after
            case .redraw where !Self.movesCursor:
                redrawWithoutMoves(drawn ?? before, after)
                drawn = after
            case .echo, .redraw:
                redrawOwed = true
            case .none: break
            case .done, .endOfInput, .interrupt, .suspend:
                // What stays on the screen is the line as typed before this key ended it.
                if redrawOwed {
                    clear(drawn ?? before)
                    draw(before)
                }
            }
            if redrawOwed, !after.edit.isInsideACharacter, !TerminalIO.inputArrives(within: 0) {
                clear(drawn ?? before)
                draw(after)
            }
            return (action, after.edit.isAwaitingEscape)
        }
        if awaitingEscape {
            // A key's sequence comes whole even over a slow link; a person's next key is slower.
            if !TerminalIO.inputArrives(within: 100) { lock.withLock { editing?.edit.escapeAlone() } }
        }
        return action
    }

    private func remember(_ line: String) {
        lock.withLock {
            guard !line.allSatisfy(\.isWhitespace), line != history.last else { return }
            history.append(line)
            if history.count > Self.historyLength { history.removeFirst() }
        }
    }

    /// The typing is over: the next output starts on a line of its own.
    private func finishEditing() {
        lock.withLock {
            // From the end of the typing, or what follows would land on its later rows.
            if let shown = drawn, shown.edit.characterAtCursor != nil, Self.movesCursor, !inputEnded {
                clear(shown)
                writeOut(shown.prompt)
                try? FileHandle.standardOutput.write(contentsOf: Data(shown.edit.typed))
            }
            editing = nil
            drawn = nil
            redrawOwed = false
            writeOut("\n")
        }
    }

    /// Moves to the start of the prompt's first row and clears from there to the end of the
    /// screen; without cursor moves, goes to a new line, leaving the typing above (it is drawn
    /// again below what comes next). Holding `lock`.
    private func clear(_ shown: Editing) {
        guard Self.movesCursor else { return writeOut("\n") }
        let width = max(1, Self.columns ?? 80)
        let rowsAbove = Self.cursorPlace(shown, width: width)?.row
            ?? Self.rowsBelowTheFirst(shown.prompt.withoutEscapes + shown.edit.text, width: width)
        writeOut("\r" + (rowsAbove > 0 ? "\u{1B}[\(rowsAbove)A" : "") + "\u{1B}[J")
    }

    /// Where the character the edit's cursor is on is drawn, from the start of the prompt's
    /// row; nil when the cursor is at the end of the typing.
    private static func cursorPlace(_ shown: Editing, width: Int) -> (row: Int, column: Int)? {
        guard let next = shown.edit.characterAtCursor else { return nil }
        return place(of: next, after: shown.prompt.withoutEscapes + shown.edit.textBeforeCursor, width: width)
    }

    /// Characters taken off the end are rubbed out with backspaces, as the terminal driver
    /// does, while the line fits on one row; anything else is drawn again on a new line.
    /// Holding `lock`.
    private func redrawWithoutMoves(_ before: Editing, _ after: Editing) {
        let width = max(1, Self.columns ?? 80)
        let shown = before.prompt.withoutEscapes + before.edit.text
        guard before.edit.text.hasPrefix(after.edit.text), after.edit.text != before.edit.text,
              Self.rowsBelowTheFirst(shown, width: width) == 0 else {
            clear(before)
            return draw(after)
        }
        let columns = before.edit.text.dropFirst(after.edit.text.count).reduce(0) { $0 + $1.terminalColumns }
        writeOut(String(repeating: "\u{8} \u{8}", count: columns))
    }

    /// The rows `text`, written from the start of a row, takes below its first one, as a terminal
    /// lays it out: a wide character that does not fit at a row's end goes to the next row whole,
    /// and a row filled to its last column leaves the cursor waiting there, not on the next row.
    static func rowsBelowTheFirst(_ text: String, width: Int) -> Int {
        layout(text, width: width).row
    }

    /// The row and column (from 0) where `character` is drawn when it follows `text`, written
    /// from the start of a row, laid out as `rowsBelowTheFirst` says.
    static func place(of character: Character, after text: String, width: Int) -> (row: Int, column: Int) {
        let (row, column) = layout(text, width: width)
        return column + max(1, character.terminalColumns) > width ? (row + 1, 0) : (row, column)
    }

    /// The row `text` ends on and the columns it fills there.
    private static func layout(_ text: String, width: Int) -> (row: Int, column: Int) {
        var row = 0
        var column = 0
        for character in text {
            let columns = character.terminalColumns
            guard columns > 0 else { continue }
            if column + columns > width {
                row += 1
                column = 0
            }
            column += columns
        }
        return (row, column)
    }

    /// The process is ending and nothing typed will be read: the line being typed is dropped
    /// from the screen, and no prompt is drawn again.
    func endInput() {
        lock.withLock {
            if let editing { clear(drawn ?? editing) }
            editing = nil
            drawn = nil
            redrawOwed = false
            inputEnded = true
            RawInput.typingDropped()
        }
    }

    /// Holding `lock`.
    private func draw(_ shown: Editing) {
        guard !inputEnded else { return }
        drawn = shown
        redrawOwed = false
        writeOut(shown.prompt)
        try? FileHandle.standardOutput.write(contentsOf: Data(shown.edit.typed))
        // Back from the end of the typing to the character the cursor is on.
        let width = max(1, Self.columns ?? 80)
        guard let cursor = Self.cursorPlace(shown, width: width) else { return }
        let end = Self.rowsBelowTheFirst(shown.prompt.withoutEscapes + shown.edit.text, width: width)
        writeOut((end > cursor.row ? "\u{1B}[\(end - cursor.row)A" : "") + "\r" + (cursor.column > 0 ? "\u{1B}[\(cursor.column)C" : ""))
    }

    private func writeOut(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    /// A line typed without being shown (a PIN), when a person is at a terminal: read a byte at
    /// a time with echo, line editing and signals off, so that Ctrl-C cancels at once and the
    /// terminal is always given back as it was. nil at the end of input or on Ctrl-C.
    /// `question` is asked once echo is off, so that nothing typed as soon as it shows is seen
    /// or lost.
    func readSecretLine(asking question: String) -> String? {
        guard Self.stdinIsTerminal else {
            ask(question)
            return Swift.readLine(strippingNewline: true)
        }
        let typed = TerminalIO.withoutEcho { () -> String? in
            ask(question)
            defer { line() }  // the newline the person typed was not shown either
            var typed: [UInt8] = []
            while let byte = TerminalIO.readByte() {
                switch byte {
                case 0x03: return nil                                    // Ctrl-C
                case 0x04: if typed.isEmpty { return nil }               // Ctrl-D on an empty line
                case 0x0A, 0x0D: return String(decoding: typed, as: UTF8.self)
                case 0x7F, 0x08: if !typed.isEmpty { typed.removeLast() } // backspace
                default: typed.append(byte)
                }
            }
            return nil
        }
        guard let typed else {
            ask(question)
            return Swift.readLine(strippingNewline: true)
        }
        return typed
    }

    /// Asks a yes/no question and reads the answer (no unless `y` or `yes`). The question is
    /// shown even when the input is not a terminal: a line is read as its answer either way.
    func confirm(_ question: String) -> Bool {
        guard Self.stdinIsTerminal else {
            line(question.trimmingCharacters(in: .whitespaces))
            return isYes(Swift.readLine(strippingNewline: true))
        }
        return isYes(readLine(prompt: question))
    }

    /// Shows a question whose answer is the next line read: a prompt at a terminal, a line of
    /// its own otherwise, so that a line from a pipe is never taken as an answer unannounced.
    func ask(_ question: String) {
        if Self.stdinIsTerminal { prompt(question) } else { line(question.trimmingCharacters(in: .whitespaces)) }
    }

    /// A prompt without a newline, shown only to a person at a terminal: on the terminal they
    /// read, which is standard error when the output goes elsewhere (`bq play --json > file`
    /// typed at a terminal), and never into that output.
    func prompt(_ text: String) {
        guard Self.stdinIsTerminal, let output = Self.promptOutput else { return }
        lock.lock()
        defer { lock.unlock() }
        guard editing == nil, !inputEnded else { return }
        try? output.write(contentsOf: Data(text.utf8))
    }

    /// Where prompts go: standard output at a terminal, else standard error at one, else nowhere.
    static let promptOutput: FileHandle? = outputIsTerminal ? .standardOutput
        : isatty(STDERR_FILENO) == 1 ? .standardError : nil

    /// The prompt again after lines printed over it, when the terminal driver edits the typing
    /// (else `line` has already put the prompt and the typing back).
    func reprompt(_ text: String) {
        // Lines printed elsewhere (standard output sent to a file) left the prompt where it was.
        guard !Self.editsLines, Self.outputIsTerminal else { return }
        prompt(text)
    }
}
