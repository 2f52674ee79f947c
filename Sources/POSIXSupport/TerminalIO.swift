import Glibc

/// Standard input and output as a terminal: its width, and its bytes one at a time.
/// Called from the thread that reads input (the main thread of `bq play` and the console);
/// the structs handed to the kernel are locals, borrowed for each call.
public enum TerminalIO {
    /// The width of the terminal standard output goes to; nil when it goes elsewhere.
    public static var columns: Int? {
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The height, in rows, of the terminal standard output goes to; nil when it goes elsewhere.
    public static var rows: Int? {
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// Whether standard output is a pipe whose reader has gone (`bq admin watch | head -1`): with
    /// SIGPIPE ignored, writes fail without a word, so a command that would go on for ever asks.
    public static var standardOutputIsClosed: Bool {
        var output = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
        return poll(&output, 1, 0) == 1 && output.revents & Int16(POLLERR) != 0
    }

    /// Whether the terminal that standard input comes from echoes what is typed (a person at a
    /// terminal; a program that holds the typing itself, such as an editor's shell buffer,
    /// turns echo off). False when it is no terminal.
    public static var echoes: Bool {
        var settings = termios()
        return tcgetattr(STDIN_FILENO, &settings) == 0 && settings.c_lflag & tcflag_t(ECHO) != 0
    }

    /// The next byte of standard input, waiting for it; nil at its end or on an error.
    public static func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }

    /// Whether a byte arrives on standard input within `milliseconds`. A wait cut short by a
    /// signal (a resized terminal) starts over; a failed one says no byte came, rather than
    /// leave the caller blocked in a read for a key nobody pressed.
    public static func inputArrives(within milliseconds: Int32) -> Bool {
        var input = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&input, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            return ready > 0
        }
    }

    /// Runs `body` with the terminal's echo, line editing and signal keys off (a PIN being
    /// typed: Ctrl-C arrives as a byte), and gives the terminal back as it was, whatever `body`
    /// does; nil, without running `body`, when standard input's settings cannot be read.
    /// Both switches take effect at once and drop nothing typed: keys typed ahead are read in
    /// order (a flush here lost a PIN typed as soon as its question showed).
    public static func withoutEcho<T>(_ body: () -> T) -> T? {
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        return body()
    }
}
