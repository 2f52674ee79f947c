import Foundation

/// Standard input's terminal with its line discipline set aside while `LineEdit` edits a line:
/// no echo, no line buffering, no keys that send signals (Ctrl-C and Ctrl-Z arrive as bytes).
/// Between lines (a command running) it stays quiet, no echo and no line buffering, but with
/// the signal keys back: what is typed meanwhile waits, unshown, for the next prompt (where the
/// editor shows it), instead of being echoed among the command's output and the live news.
/// Output processing is left alone, so "\n" still starts a new line. The terminal's settings
/// are put back by `leave()`, at exit (`exit(3)` from the reader thread included), and before
/// a signal ends the process (a crash included), so that a shell is never left without its echo.
///
/// Main thread only, but for the exit and signal paths, which read `RawState` alone.
enum RawInput {
    /// Sets raw input; false (nothing changed) when standard input is not a terminal, or the
    /// process is exiting.
    static func enter() -> Bool {
        guard RawState.flags[exiting] == 0 else { return false }
        if RawState.flags[active] == 0 {
            guard tcgetattr(STDIN_FILENO, RawState.saved) == 0 else { return false }
            installRestorers()
        }
        return set(signalKeys: false)
    }

    /// Between lines: see the type's comment. Only after `enter()`.
    static func quiet() {
        guard RawState.flags[active] != 0 else { return }
        _ = set(signalKeys: true)
    }

    private static func set(signalKeys: Bool) -> Bool {
        var raw = RawState.saved.pointee
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | (signalKeys ? 0 : ISIG))
        withUnsafeMutableBytes(of: &raw.c_cc) { characters in
            characters[Int(VMIN)] = 1
            characters[Int(VTIME)] = 0
        }
        // TCSANOW, not TCSAFLUSH: what was typed ahead while a command ran is the next line.
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return false }
        RawState.flags[active] = 1
        RawState.flags[typing] = signalKeys ? 0 : 1
        return true
    }

    /// Puts the terminal back as `enter()` found it. Idempotent.
    static func leave() {
        guard RawState.flags[active] != 0 else { return }
        RawState.flags[active] = 0
        RawState.flags[typing] = 0
        tcsetattr(STDIN_FILENO, TCSANOW, RawState.saved)
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

    /// The signals that end the process by default, the ones a crash raises included.
    private static let fatalSignals = [SIGTERM, SIGHUP, SIGQUIT, SIGINT, SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

    private static func installRestorers() {
        guard RawState.flags[installed] == 0 else { return }
        RawState.flags[installed] = 1
        atexit {
            // Another thread may exit (a session ended by the server) while this one edits.
            RawState.flags[exiting] = 1
            guard RawState.flags[active] != 0 else { return }
            RawState.flags[active] = 0
            tcsetattr(STDIN_FILENO, TCSANOW, RawState.saved)
            if RawState.flags[typing] != 0 {
                // A line half typed stays on the screen; the shell's prompt goes below it.
                var newline: UInt8 = 0x0A
                _ = write(STDOUT_FILENO, &newline, 1)
            }
        }
        for number in fatalSignals {
            var existing = sigaction()
            sigaction(number, nil, &existing)
            // A signal the process was started with ignored (nohup) stays ignored.
            if unsafeBitCast(existing.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                continue
            }
            signal(number) { number in
                // A signal handler: only async-signal-safe calls (tcsetattr, signal, raise), on
                // memory that needs no initialisation. A fault's signal, raised again here, is
                // blocked until the handler returns; the faulting instruction then raises it
                // once more, to the default action.
                if RawState.flags[active] != 0 {
                    tcsetattr(STDIN_FILENO, TCSANOW, RawState.saved)
                    if RawState.flags[typing] != 0 {
                        // The shell's prompt goes below the typing, not after it.
                        var newline: UInt8 = 0x0A
                        _ = write(STDOUT_FILENO, &newline, 1)
                    }
                }
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }
}

/// What the exit and signal paths read: plain memory, allocated before any of them is
/// installed, so that reading it in a signal handler runs no lazy initialisation and no
/// exclusivity check.
private enum RawState {
    /// The settings to put back.
    nonisolated(unsafe) static let saved: UnsafeMutablePointer<termios> = {
        let memory = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        memory.initialize(to: termios())
        return memory
    }()
    /// Indexed by `active`, `exiting`, `installed` and `typing`.
    nonisolated(unsafe) static let flags: UnsafeMutablePointer<Int32> = {
        let memory = UnsafeMutablePointer<Int32>.allocate(capacity: 4)
        memory.initialize(repeating: 0, count: 4)
        return memory
    }()
}

/// Raw input is set.
private let active = 0
/// The process is exiting: raw input must not start again.
private let exiting = 1
/// The exit and signal paths are in place.
private let installed = 2
/// A line is being edited (the signal keys are off).
private let typing = 3
