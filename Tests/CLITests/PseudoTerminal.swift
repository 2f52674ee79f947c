import Foundation

/// A child `bq` whose standard input and output are a pseudo-terminal, as when a person runs it
/// in a terminal window: what it draws is read from the terminal's other end, keys are typed
/// into it. Standard error is a pipe; with `stdoutPiped`, standard output is the pipe
/// (`output`) and standard error the terminal, as in `bq play --json > file`. Killed when released.
final class TerminalProcess: @unchecked Sendable {
    let process: Process
    /// The terminal's other end: reads what the child shows, writes what a person types.
    private let master: Int32
    private let slavePath: String
    /// Everything shown on the terminal, read on a thread of its own.
    let screen: OutputCollector
    let errors: OutputCollector
    /// Standard output, when `stdoutPiped`.
    let output: OutputCollector?
    private let exited: DispatchSemaphore

    /// `environment`: set over the defaults below (nil removes one).
    init(_ arguments: [String], home: URL, columns: UInt16 = 80, rows: UInt16 = 40,
         environment extra: [String: String?] = [:], stdoutPiped: Bool = false) throws {
        let executable = try bqExecutable()
        // posix_openpt and its friends are not in Swift's Glibc module; these are what they do
        // on Linux: open the multiplexer, unlock the new terminal (TIOCSPTLCK), ask its number
        // (TIOCGPTN). The request numbers are _IOW('T', 0x31, int) and _IOR('T', 0x30, uint).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw TestFailure("no pseudo-terminal: \(String(cString: strerror(errno)))") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        guard ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0,
              ioctl(master, UInt(TIOCSWINSZ), &size) == 0 else {
            close(master)
            throw TestFailure("no pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let slavePath = "/dev/pts/\(number)"
        // O_NOCTTY: the test runner must never take the child's terminal for its own.
        let slaveDescriptor = open(slavePath, O_RDWR | O_NOCTTY)
        guard slaveDescriptor >= 0 else {
            close(master)
            throw TestFailure("cannot open \(slavePath)")
        }
        let slave = FileHandle(fileDescriptor: slaveDescriptor, closeOnDealloc: true)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["TERM"] = "xterm"
        environment["BQ_PLAIN_INPUT"] = nil
        environment["BQ_ADMIN_KEY"] = nil
        environment["COLUMNS"] = nil
        environment["HOME"] = home.path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        for (name, value) in extra { environment[name] = value }
        process.environment = environment
        process.standardInput = slave
        let stderr = Pipe()
        let stdout = Pipe()
        if stdoutPiped {
            process.standardOutput = stdout
            process.standardError = slave
            try? stderr.fileHandleForWriting.close()
        } else {
            process.standardOutput = slave
            process.standardError = stderr
            try? stdout.fileHandleForWriting.close()
        }
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try spawnWithDefaultSignalMask(process)
        } catch {
            close(master)
            throw error
        }
        // The child has its own copies; this one would keep the terminal open past its exit.
        try? slave.close()
        self.process = process
        self.master = master
        self.slavePath = slavePath
        self.exited = exited
        screen = OutputCollector(fileDescriptor: master)
        errors = OutputCollector(stderr.fileHandleForReading)
        output = stdoutPiped ? OutputCollector(stdout.fileHandleForReading) : nil
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        // Closed only once its reader is done (the child gone, this end reads EIO), so that its
        // number cannot be reused under a reader still reading it.
        if screen.waitForEnd(timeout: 10) { close(master) }
    }

    /// Types `text` (bytes as they are: "\r" is Enter, "\u{7F}" Backspace).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    func waitForExit(timeout: Double = 20) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }

    /// Waits (up to `timeout` seconds, asking every few milliseconds) until the terminal's
    /// local modes satisfy `condition`: the child sets them when it moves between states that
    /// show nothing on the screen. Polled because nothing signals a change of a terminal's
    /// settings to the other end (no read wakes, no event is sent).
    func waitForLocalModes(timeout: Double = 20, _ condition: (tcflag_t) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let modes = localModes(), condition(modes) { return true }
            usleep(2_000)
        }
        return false
    }

    /// The terminal's settings as the child left them (the terminal outlives the child while
    /// this end is open).
    func localModes() -> tcflag_t? {
        let descriptor = open(slavePath, O_RDWR | O_NOCTTY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var settings = termios()
        guard tcgetattr(descriptor, &settings) == 0 else { return nil }
        return settings.c_lflag
    }
}
