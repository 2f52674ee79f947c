import ArgumentParser
import Client
import Foundation
import POSIXSupport

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play BirthdayQuest: pick your character, then complete challenges, unlock rewards, write dares.",
        discussion: """
            Interactive by default: the game stays on screen and updates itself as other players act. \
            Give a command after the options to run just that one (bq play --character mia complete c01 done), \
            or --script to read commands from stdin. Type help inside the game for the commands.

            A one-shot or --script exits 0 when done; 1 when refused (or a --script command failed); \
            2 when no server answers; 64 for bad arguments; 75 when no reply came in time and a \
            change may or may not have been made (its key is printed: run the same command again \
            with --idem KEY). A game at the terminal exits 3 when its character is unclaimed or \
            taken over.
            """)

    @Option(help: "Server address.") var host = "127.0.0.1"
    @Option(help: "Server port.") var port = 4747
    @Option(help: "Seconds to wait for each reply, reconnecting included (0.1 to 86400); under 3, also for the connection and the server's hello.") var timeout: Double = 30
    @Option(help: "Game name (default: the server's default game).") var game: String?
    @Option(help: "Claim this character without asking (e.g. mia).") var character: String?
    @Option(help: "The character's PIN: to take it over from another device, or to claim it at all on a server that asks for PINs (claims_need_pin). Other users of this machine can read it in the process list: at a terminal, leave it out and be asked for it.") var pin: String?
    @Option(name: .customLong("device-file"),
            help: "Where the device id and session token are kept (default ~/.config/bq/play-HOST-PORT-GAME.json, GAME being \"default\" without --game). One per person: two people on one account each give their own.")
    var deviceFile: String?
    @Flag(help: "Print the raw protocol lines instead of the game screens.") var json = false
    @Flag(name: .customLong("no-color"), help: "No ANSI colours (NO_COLOR is respected too).") var noColor = false
    @Flag(help: "Read commands from stdin, one per line, without live updates; exit at the end.") var script = false
    @Option(help: ArgumentHelp("With one command that makes a change: make it under this idempotency key (1 to 128 characters). A run left without an answer (exit 75) prints the key it used: the same command with it is made at most once.", valueName: "key"))
    var idem: String?
    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("One command to run, then exit.", valueName: "command")) var commandWords: [String] = []

    /// The command's words, less a `--` that ends the options (`bq play -- "$@"` in a wrapper).
    var command: [String] { commandWords.first == "--" ? Array(commandWords.dropFirst()) : commandWords }

    func validate() throws {
        // The command words are captured as they are (they may start with dashes), and that
        // would capture a help request too.
        if let first = command.first, first == "-h" || first == "--help" {
            throw CleanExit.helpRequest(self)
        }
        try validateTimeout(timeout)
        try validatePort(port)
        try validateIdempotencyKey(idem)
        // One key is one change: a game or a script makes many.
        if idem != nil, command.isEmpty {
            throw ValidationError("--idem goes with one command, before its words (bq play --idem KEY complete c01 done)")
        }
    }

    func run() throws {
        // A reader that stops early (`| head -1`) must not end a change half told: its exit
        // status, not SIGPIPE's, says whether it was made.
        ignoreSIGPIPE()
        let terminal = Terminal(colorAllowed: !noColor)
        let mode: PlayMode = !command.isEmpty ? .oneShot : (script ? .script : .interactive)
        if let problem = PlaySession.oneShotProblem(command) {
            terminal.error(problem.terminalSafe)
            throw ExitCode.validationFailure
        }
        let path = deviceFile ?? PlayDeviceFile.defaultPath(host: host, port: port, game: game)
        let file: PlayDeviceFile
        do {
            file = try PlayDeviceFile.load(path: path)
        } catch {
            terminal.error("cannot use the device file \(path): \(error)")
            throw ExitCode(2)
        }
        let client: GameClient
        do {
            // Raw lines go out as they are, from the server's hello on.
            let rawLines: (@Sendable (String, Bool) -> Void)?
            if json {
                rawLines = { line, outgoing in
                    if !outgoing { terminal.line(line.jsonLineTerminalSafe) }
                }
            } else {
                rawLines = nil
            }
            var options = ClientOptions()
            options.requestTimeout = timeout
            options.limitConnectTimeout(toSeconds: timeout)
            client = try GameClient.connect(host: host, port: port, options: options, onLine: rawLines)
        } catch {
            terminal.error(cannotConnectMessage("play", error, host: host, port: port))
            throw ExitCode(2)
        }
        defer { client.close() }
        let session = PlaySession(client: client, terminal: terminal, mode: mode, json: json, game: game,
                                  file: file, changeKey: idem)
        switch session.signIn(character: character, pin: pin) {
        case .signedIn: break
        case .refused: throw ExitCode(1)
        case .noAnswer: throw ExitCode(2)
        case .left: return
        }
        switch session.start() {
        case .started: break
        case .refused: throw ExitCode(1)
        case .noReply: throw ExitCode(Admin.exitUnconfirmed)
        case .noAnswer: throw ExitCode(2)
        }
        let outcome: PlaySession.Outcome
        switch mode {
        case .oneShot: outcome = session.execute(command)
        case .script, .interactive: outcome = session.readCommands()
        }
        // A key given to a command that makes no change does nothing: said, so that nobody
        // counts on it.
        if let idem, outcome == .ok, !session.givenChangeKeyUsed {
            terminal.error("--idem \(idem.terminalSafe) was not used: \(command[0].terminalSafe) makes no change.")
        }
        switch outcome {
        case .failed: throw ExitCode(1)
        case .usage: throw ExitCode.validationFailure
        case .unconfirmed: throw ExitCode(Admin.exitUnconfirmed)
        case .ok, .quit: return
        }
    }
}

enum PlayMode {
    case interactive, script, oneShot
}
