import ArgumentParser
import Client

/// The organizer plays from `bq play` like everyone else, and runs the game from there too: the
/// server lets the organizer's character do every organizer operation, so the operations of
/// `bq admin` work here with the player's own session, no admin key needed.
extension PlaySession {
    /// The `bq admin` subcommands that are operations on the game (not its screens).
    static let organizerTools = ["force-complete", "force-unlock", "final-badge", "unclaim", "adjust-points",
                                 "set-day", "add-challenge", "edit-challenge", "add-reward", "edit-reward", "log"]

    /// Runs an organizer tool; nil when `words` names none.
    func organizerTool(_ words: [String]) -> Outcome? {
        guard let name = words.first?.lowercased(), Self.organizerTools.contains(name) else { return nil }
        if let help = Admin.subcommandHelp(words) {
            say([help])
            return .ok
        }
        let command: any ParsableCommand
        do {
            command = try Admin.parseAsRoot([name] + words.dropFirst())
        } catch {
            refused(Admin.message(for: error))
            return .failed
        }
        guard let operation = command as? any AdminOperation else { return nil }
        if operation.isDestructive && mode == .interactive {
            let answer = readInput("\(words.joined(separator: " ")): are you sure? [y/N] ")?
                .trimmingCharacters(in: .whitespaces).lowercased()
            guard answer == "y" || answer == "yes" else {
                say(["Cancelled."])
                return .ok
            }
        }
        do {
            say(try operation.perform(AdminContext(client: client, terminal: terminal)))
            return .ok
        } catch {
            refused(error.description)
            return .failed
        }
    }

    func organizerHelpLines() -> [String] {
        [style.bold("Organizer"),
         "  force-complete <challenge>, force-unlock <reward> [--no-deduct], final-badge",
         "  adjust-points <delta> --reason \"...\", set-day <day>, unclaim <character>",
         "  add-challenge, edit-challenge, add-reward, edit-reward   (<command> --help for their options)",
         "  log                        the event log"]
    }
}
