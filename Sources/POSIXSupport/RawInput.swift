import Foundation
import Synchronization

/// Standard input's terminal with its line discipline set aside while `LineEdit` edits a line:
/// no echo, no line buffering, no keys that send signals (Ctrl-C and Ctrl-Z arrive as bytes).
/// Between lines (a command running) it stays quiet, no echo and no line buffering, with Ctrl-C
/// back as a signal: what is typed meanwhile waits, unshown, for the next prompt (where the
/// editor shows it), instead of being echoed among the command's output and the live news.
/// (Ctrl-Z stays a byte then too, so that it always goes through `suspend()`, which gives the
/// shell its terminal back while stopped.) Output processing is left alone, so "\n" still
/// starts a new line. The terminal's settings are put back by `leave()`, at exit (`exit(3)`
/// from the reader thread included), and before a signal ends the process (a crash included),
/// so that a shell is never left without its echo.
///
/// Main thread only, but for the exit and signal paths, which read `RawState` alone (atomics),
/// and the thread `handInterrupts` starts, which ends the process as a Ctrl-C at the prompt
/// does. It lives in this module, beside the loop's signal watchers, because its signal handlers
/// and its `atexit` callback are C callbacks over raw memory: the project keeps those in its thin
/// system wrappers.
public enum RawInput {
    /// Sets raw input; false (nothing changed) when standard input is not a terminal, or the
    /// process is exiting.
    public static func enter() -> Bool {
        RawState.prepare()
        guard !RawState.exiting.load(ordering: .sequentiallyConsistent) else { return false }
        if !RawState.active.load(ordering: .sequentiallyConsistent) {
            guard tcgetattr(STDIN_FILENO, RawState.saved) == 0 else { return false }
            installRestorers()
        }
        return set(signalKeys: false)
    }

    /// Between lines: see the type's comment. Only after `enter()`.
    public static func quiet() {
        guard RawState.active.load(ordering: .sequentiallyConsistent) else { return }
        _ = set(signalKeys: true)
    }

    private static func set(signalKeys: Bool) -> Bool {
        var raw = RawState.saved.pointee
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | (signalKeys ? 0 : ISIG))
        withUnsafeMutableBytes(of: &raw.c_cc) { characters in
            characters[Int(VMIN)] = 1
            characters[Int(VTIME)] = 0
            characters[Int(VSUSP)] = 0  // _POSIX_VDISABLE: Ctrl-Z is a byte for the editor
        }
        // Marked first: a signal from here on puts the saved settings back.
        RawState.active.store(true, ordering: .sequentiallyConsistent)
        RawState.typing.store(!signalKeys, ordering: .sequentiallyConsistent)
        // TCSANOW, not TCSAFLUSH: what was typed ahead while a command ran is the next line.
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else {
            leave()
            return false
        }
        // The process began exiting meanwhile (another thread): its restore may have run first.
        if RawState.exiting.load(ordering: .sequentiallyConsistent) { leave() }
        return true
    }

    /// Puts the terminal back as `enter()` found it. Idempotent.
    public static func leave() {
        guard RawState.active.load(ordering: .sequentiallyConsistent) else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, RawState.saved)
        RawState.active.store(false, ordering: .sequentiallyConsistent)
        RawState.typing.store(false, ordering: .sequentiallyConsistent)
    }

    /// The line being typed was dropped from the screen (the process is ending): nothing to
    /// put a new line after at exit.
    public static func typingDropped() {
        RawState.typing.store(false, ordering: .sequentiallyConsistent)
    }

    /// Ctrl-C: what it has always done to `bq play` and the console, end the process, with the
    /// terminal given back first.
    public static func interrupt() -> Never {
        leave()
        signal(SIGINT, SIG_DFL)
        raise(SIGINT)
        exit(130)
    }

    /// The terminal's Ctrl-C (sent as a signal while a command runs, between prompts) runs `body`
    /// on a thread of its own and then ends the process as `interrupt()` does: the same last
    /// words as a Ctrl-C at the prompt, which a signal handler could not say (it may run no
    /// Swift code that locks or allocates). The handler only writes a byte to a pipe that the
    /// thread waits on. Once per process; takes effect with the signal handlers (`enter()`).
    public static func handInterrupts(to body: @escaping @Sendable () -> Void) {
        var ends: [Int32] = [-1, -1]
        guard RawState.interruptWriter.load(ordering: .sequentiallyConsistent) < 0, pipe(&ends) == 0 else { return }
        let reader = ends[0]
        let thread = Thread {
            var byte: UInt8 = 0
            while read(reader, &byte, 1) < 0 && errno == EINTR {}
            body()
            interrupt()
        }
        thread.name = "bq-interrupt"
        thread.start()
        RawState.interruptWriter.store(ends[1], ordering: .sequentiallyConsistent)
    }

    /// Ctrl-Z: stops the process as the terminal driver would have, the terminal given back to
    /// the shell meanwhile; raw input again once the shell continues it.
    public static func suspend() {
        leave()
        raise(SIGTSTP)
        _ = enter()
    }

    /// The signals that end the process by default, the ones a crash raises included.
    private static let fatalSignals = [SIGTERM, SIGHUP, SIGQUIT, SIGINT, SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

    private static func installRestorers() {
        guard !RawState.installed.load(ordering: .sequentiallyConsistent) else { return }
        RawState.installed.store(true, ordering: .sequentiallyConsistent)
        atexit {
            // Another thread may exit (a session ended by the server) while this one edits.
            RawState.exiting.store(true, ordering: .sequentiallyConsistent)
            guard RawState.active.load(ordering: .sequentiallyConsistent) else { return }
            tcsetattr(STDIN_FILENO, TCSANOW, RawState.saved)
            RawState.active.store(false, ordering: .sequentiallyConsistent)
            if RawState.typing.load(ordering: .sequentiallyConsistent) {
                // A line half typed stays on the screen; the shell's prompt goes below it.
                var newline: UInt8 = 0x0A
                _ = write(STDOUT_FILENO, &newline, 1)
            }
        }
        for number in fatalSignals {
            let previous = RawState.previousActions + Int(number)
            sigaction(number, nil, previous)
            // A signal the process was started with ignored (nohup) stays ignored.
            if unsafeBitCast(previous.pointee.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                continue
            }
            signal(number) { number in
                // A Ctrl-C with a thread waiting for it (`handInterrupts`): that thread says the
                // last words and ends the process.
                let writer = RawState.interruptWriter.load(ordering: .sequentiallyConsistent)
                if number == SIGINT && writer >= 0 {
                    var byte: UInt8 = 0x03
                    _ = write(writer, &byte, 1)
                    return
                }
                // A signal handler: only async-signal-safe calls, on memory set up before it was
                // installed. The terminal is not touched from a background process group (a
                // stopped job killed from the shell would be stopped again by SIGTTOU); a
                // terminal that is no one's controlling terminal has no such groups.
                let foreground = tcgetpgrp(STDIN_FILENO)
                if RawState.active.load(ordering: .sequentiallyConsistent), foreground == -1 || foreground == getpgrp() {
                    tcsetattr(STDIN_FILENO, TCSANOW, RawState.saved)
                    if RawState.typing.load(ordering: .sequentiallyConsistent) {
                        // The shell's prompt goes below the typing, not after it.
                        var newline: UInt8 = 0x0A
                        _ = write(STDOUT_FILENO, &newline, 1)
                    }
                }
                // What handled it before (the default, or the Swift runtime's backtracer for a
                // crash) gets it next: raised again here, or, for a fault, when the faulting
                // instruction runs again once this handler returns.
                sigaction(number, RawState.previousActions + Int(number), nil)
                raise(number)
            }
        }
    }
}

/// What the exit and signal paths read, from any thread and from signal handlers: the flags
/// are lock-free atomics (the reader thread may `exit(3)` while the main thread sets raw input),
/// and everything here is initialised by `prepare()` before any of those paths is installed, so
/// that a signal handler reading it runs no initialisation and no exclusivity check.
private enum RawState {
    /// The settings to put back.
    nonisolated(unsafe) static let saved: UnsafeMutablePointer<termios> = {
        let memory = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        memory.initialize(to: termios())
        return memory
    }()
    /// Raw (or quiet) input is set.
    static let active = Atomic<Bool>(false)
    /// The process is exiting: raw input must not start again.
    static let exiting = Atomic<Bool>(false)
    /// The exit and signal paths are in place.
    static let installed = Atomic<Bool>(false)
    /// A line is being edited (the signal keys are off).
    static let typing = Atomic<Bool>(false)
    /// The pipe's end a SIGINT is written to when `handInterrupts` waits for it; -1 when not.
    static let interruptWriter = Atomic<Int32>(-1)
    /// Each fatal signal's action before ours, indexed by signal number.
    nonisolated(unsafe) static let previousActions: UnsafeMutablePointer<sigaction> = {
        let memory = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
        memory.initialize(repeating: sigaction(), count: 65)
        return memory
    }()

    /// Runs every lazy initialiser above.
    static func prepare() {
        _ = saved
        _ = previousActions
        _ = active.load(ordering: .relaxed)
        _ = exiting.load(ordering: .relaxed)
        _ = installed.load(ordering: .relaxed)
        _ = typing.load(ordering: .relaxed)
        _ = interruptWriter.load(ordering: .relaxed)
    }
}
