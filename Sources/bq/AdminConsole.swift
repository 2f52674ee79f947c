import ArgumentParser
import Client
import Foundation

struct AdminConsole: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "An interactive console: the same operations, with confirmation before destructive ones.")
    @OptionGroup var connection: AdminConnectionOptions

    func run() throws {
        try connection.withContext(converse)
    }

    private func converse(_ context: AdminContext) {
        let terminal = context.terminal
        terminal.line("Signed in as admin. Type help for the commands, quit to leave.")
        context.client.onEvent { event in
            switch event {
            case .disconnected: terminal.line(terminal.style.yellow("Connection lost; reconnecting…"))
            case .reconnected: terminal.line(terminal.style.green("Reconnected."))
            case .lateReply(let op, let result): terminal.line(lateReplyLine(op, result, style: terminal.style))
            default: break
            }
        }
        while true {
            terminal.prompt(terminal.style.bold("admin> "))
            guard let line = readLine(strippingNewline: true) else { return }
            let words = splitCommandLine(line)
            guard let first = words.first else { continue }
            switch first {
            case "quit", "exit": return
            case "help":
                terminal.line(Admin.helpMessage(columns: 100))
                continue
            default: break
            }
            let known = Admin.configuration.subcommands.compactMap { $0.configuration.commandName }
            guard known.contains(first) else {
                terminal.line("Unknown command \(first). Type help for the list.")
                continue
            }
            let outcome = Admin.runConsoleLine(words, context: context) { question in
                terminal.prompt(question)
                if !Terminal.stdinIsTerminal { terminal.line(question.trimmingCharacters(in: .whitespaces)) }
                let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased()
                return answer == "y" || answer == "yes"
            }
            switch outcome {
            case .output(let lines): for out in lines { terminal.line(out) }
            case .refused(let error): terminal.line(terminal.style.red("✗ ") + error.description)
            case .usage(let message): terminal.line(message)
            case .cancelled: terminal.line("Cancelled.")
            case .notAnOperation: terminal.line("\(first) is not available inside the console.")
            }
        }
    }
}
