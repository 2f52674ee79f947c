import Foundation

/// Standard input's terminal with its line discipline set aside while `LineEdit` edits a line:
/// no echo, no line buffering, no keys that send signals (Ctrl-C and Ctrl-Z arrive as bytes).
/// Output processing is left alone, so "\n" still starts a new line. The terminal's settings
/// are put back by `leave()`, at exit (`exit(3)` from the reader thread included), and before a
/// signal that ends the process, so that a shell is never left without its echo.
///
/// Main thread only, but for the exit and signal paths, which only read `saved`.
enum RawInput {
    /// Sets raw input; false (nothing changed) when standard input is not a terminal.
    static func enter() -> Bool {
        var current = termios()
        guard tcgetattr(STDIN_FILENO, &current) == 0 else { return false }
        installRestorers()
        rawSaved = current
        var raw = current
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        withUnsafeMutableBytes(of: &raw.c_cc) { characters in
            characters[Int(VMIN)] = 1
            characters[Int(VTIME)] = 0
        }
        // TCSANOW, not TCSAFLUSH: what was typed ahead while a command ran is the next line.
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return false }
        rawActive = 1
        return true
    }

    /// Puts the terminal back as `enter()` found it. Idempotent.
    static func leave() {
        guard rawActive != 0 else { return }
        rawActive = 0
        tcsetattr(STDIN_FILENO, TCSANOW, &rawSaved)
    }

    /// Ctrl-C: what it has always done to `bq play` and the console, end the process, with the
    /// terminal given back first.
    static func interrupt() -> Never {
        leave()
        signal(SIGINT, SIG_DFL)
        raise(SIGINT)
        exit(130)
    }

    /// Ctrl-Z: stops the process as the terminal driver would have; raw input again once the
    /// shell continues it.
    static func suspend() {
        leave()
        raise(SIGTSTP)
        _ = enter()
    }

    private static func installRestorers() {
        guard !restorersInstalled else { return }
        restorersInstalled = true
        atexit { RawInput.leave() }
        for number in [SIGTERM, SIGHUP, SIGQUIT, SIGINT] {
            signal(number) { number in
                // A signal handler: only async-signal-safe calls (tcsetattr, signal, raise).
                if rawActive != 0 { tcsetattr(STDIN_FILENO, TCSANOW, &rawSaved) }
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }
}

// Process-wide by nature (one terminal, one set of signal dispositions): written on the main
// thread before raw input starts, read by the exit and signal paths.
nonisolated(unsafe) private var rawSaved = termios()
nonisolated(unsafe) private var rawActive: Int32 = 0
nonisolated(unsafe) private var restorersInstalled = false
