import ArgumentParser
import Client
import Domain
import Foundation
import POSIXSupport
import JSON

struct AdminStatus: AdminOperation {
    static let configuration = CommandConfiguration(commandName: "status",
                                                    abstract: "The game's numbers, the characters, the newest events.")
    @OptionGroup var connection: AdminConnectionOptions
    @Option(help: "How many recent events to show (0 to 1000).") var events = 8

    func validate() throws {
        guard (0...Limits.eventsPage.upperBound).contains(events) else {
            throw ValidationError("--events must be 0 to \(Limits.eventsPage.upperBound), got \(events)")
        }
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        try AdminScreens.fetchStatus(context, events: events, columns: Terminal.columns)
    }
}

struct AdminShow: AdminOperation {
    static let configuration = CommandConfiguration(commandName: "show",
                                                    abstract: "A challenge, dare or reward in full: its text, proof and gift, as the admin sees it.")
    @OptionGroup var connection: AdminConnectionOptions
    @Argument(help: "Challenge, dare or reward id, e.g. c07, dare-priya, r03.") var id: String

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        let view = PlayView(json: try context.client.fetchState().view, style: context.style)
        guard let card = view.show(id) else {
            throw .refused(ServerRefusal(op: "state", code: "not_found", message: "No challenge, dare or reward \(id)"))
        }
        return card
    }
}

struct AdminTimeline: AdminOperation {
    static let configuration = CommandConfiguration(commandName: "timeline", abstract: "The game's timeline, as the players see it.")
    @OptionGroup var connection: AdminConnectionOptions

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        PlayView(json: try context.client.fetchState().view, style: context.style).timelineLines()
    }
}

struct AdminLog: AdminOperation {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "The event log: who did what, when.")
    @OptionGroup var connection: AdminConnectionOptions
    @Option(help: "Show events after this version.") var after = 0
    @Option(help: "At most this many (1 to 1000).") var limit = 100
    @Option(help: "Only the newest N events (1 to 1000), instead of those after --after.") var last: Int?
    @Flag(help: "One JSON object per line: each event whole, as the server gives it, for scripts.") var json = false

    func validate() throws {
        if !Limits.eventsPage.contains(limit) {
            throw ValidationError("--limit must be \(Limits.eventsPage.lowerBound) to \(Limits.eventsPage.upperBound), got \(limit)")
        }
        if let last, !Limits.eventsPage.contains(last) {
            throw ValidationError("--last must be \(Limits.eventsPage.lowerBound) to \(Limits.eventsPage.upperBound), got \(last)")
        }
        if last != nil, after != 0 { throw ValidationError("--last shows the newest events: give it or --after, not both") }
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        var from = after
        var count = limit
        if let last {
            // The version now, to count back from; a change landing meanwhile only adds one more.
            let now = try context.client.request("whoami").version ?? 0
            from = max(0, now - last)
            count = last
        }
        let reply = try context.client.request("events", ["after": .int(from), "limit": .int(count)])
        let events = reply.result["events"]?.arrayValue ?? []
        // Serialized JSON escapes every control character: nothing in it can drive a terminal.
        if json { return events.map { $0.serialized() } }
        guard !events.isEmpty else { return ["No events after version \(from)."] }
        var lines = events.map { AdminScreens.event($0, style: context.style) }
        // A page that stops short of the game's version says so: the change someone looks for
        // after a run with no answer is among the newest, not the first hundred.
        if let shown = events.last?["version"]?.intValue, shown >= 0, let version = reply.version, shown < version {
            lines.append(context.style.dim("… \(version - shown) newer event\(version - shown == 1 ? "" : "s"), up to version \(version): "
                + "--after \(shown) for the next ones, --last N for the newest."))
        }
        return lines
    }
}

struct AdminWatch: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "watch",
                                                    abstract: "A live status that redraws whenever the game changes (Ctrl-C to stop).")
    @OptionGroup var connection: AdminConnectionOptions

    func run() throws {
        try connection.withContext(watch)
    }

    /// How often the screen is read again with no change to the game: who is online is not
    /// pushed, and the organizer watching wants it current.
    static let presenceSeconds = 2

    private func watch(_ context: AdminContext) throws {
        let terminal = context.terminal
        let changed = DispatchSemaphore(value: 0)
        // The observer only signals: status needs requests, which must not run on the reader thread.
        let notices = ConnectionNotices()
        let noticeShown = Flag()
        context.client.onEvent { event in
            switch event {
            case .patch, .snapshot: changed.signal()
            case .reconnected:
                _ = notices.line(for: event, style: terminal.style)  // the redraw says it
                changed.signal()
            case .bye, .disconnected, .reconnectRefused:
                if let line = notices.line(for: event, style: terminal.style) {
                    terminal.line(line)
                    noticeShown.set()
                }
            default: break
            }
        }
        do {
            try context.client.subscribe()
        } catch {
            terminal.error(error.description.terminalSafe)
            throw ExitCode(error.exitStatus)
        }
        let isTerminal = Terminal.outputIsTerminal
        var shown: (version: Int, lines: [String], size: [Int?])?
        // Until nobody reads the screens any more (`bq admin watch | head`).
        while !TerminalIO.standardOutputIsClosed {
            // A burst of patches is one redraw: the signals it left are taken before reading.
            while changed.wait(timeout: .now()) == .success {}
            let version = context.client.version
            let columns = Terminal.columns
            guard let status = try? AdminScreens.fetchStatus(context, events: 8, columns: columns) else {
                _ = changed.wait(timeout: .now() + .seconds(Self.presenceSeconds))
                continue
            }
            // A screen that says the same as the one shown is not drawn again, unless a notice
            // about the connection was printed under it since.
            // A resized terminal has reflowed the old screen: drawn again for the new size.
            let size = [columns, Terminal.rows]
            if noticeShown.take() || shown?.version != version || shown?.lines != status || shown?.size != size {
                shown = (version, status, size)
                // Redrawing is a terminal's business, colours or not (--no-color, NO_COLOR); a
                // pipe gets each screen after a separator.
                if isTerminal {
                    terminal.line("\u{1B}[2J\u{1B}[H")
                    for line in Self.fitted(status, rows: (Terminal.rows ?? 24) - 1, columns: columns ?? 80) { terminal.line(line) }
                } else {
                    terminal.line("──── version \(version) ────")
                    for line in status { terminal.line(line) }
                }
            }
            _ = changed.wait(timeout: .now() + .seconds(Self.presenceSeconds))
        }
    }

    /// The status cut to a screen of `rows`, so that its top (the numbers) never scrolls away:
    /// the oldest of the newest events go first, then whatever is at the bottom.
    static func fitted(_ lines: [String], rows: Int, columns: Int) -> [String] {
        func height(_ line: String) -> Int { Terminal.rowsBelowTheFirst(line.withoutEscapes, width: max(1, columns)) + 1 }
        var lines = lines
        var total = lines.reduce(0) { $0 + height($1) }
        if let header = lines.firstIndex(where: { $0.withoutEscapes == AdminScreens.newestEventsHeading }) {
            while total > rows, header + 2 < lines.count {
                total -= height(lines.remove(at: header + 1))
            }
        }
        while total > rows, lines.count > 1 { total -= height(lines.removeLast()) }
        return lines
    }

    /// Set by the connection's reader thread, taken by the watching loop.
    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        // Guarded by `lock`.
        private var isSet = false

        func set() { lock.withLock { isSet = true } }

        func take() -> Bool {
            lock.withLock {
                defer { isSet = false }
                return isSet
            }
        }
    }
}

enum AdminScreens {
    /// Reads the state and the newest `events` events, and lays them out.
    static func fetchStatus(_ context: AdminContext, events: Int, columns: Int? = nil) throws(ClientError) -> [String] {
        let (version, view) = try context.client.fetchState()
        let reply = try context.client.request("events", ["after": .int(max(0, version - events)), "limit": .int(max(1, events))])
        var connected: [String: Int] = [:]
        for character in try context.client.characters(game: context.game) {
            if let id = character["id"]?.stringValue, let count = character["connected"]?.intValue { connected[id] = count }
        }
        return status(view: view, version: version, events: reply.result["events"]?.arrayValue ?? [],
                      connected: connected, gameName: context.game, style: context.style, columns: columns)
    }

    static let newestEventsHeading = "Newest events"
    /// Fewer columns than this beside a dare's row, and its title goes on a line of its own.
    static let shortestTitleShown = 12

    /// `connected`: signed-in connections per character, as `characters` tells the organizer.
    /// `gameName`: the game asked for by name, said in the heading (games seeded alike look alike).
    /// With `columns`, each event's data is cut to fit one row.
    static func status(view: JSONValue, version: Int, events: [JSONValue], connected: [String: Int] = [:],
                       gameName: String? = nil, style: Style, columns: Int? = nil) -> [String] {
        let view = view.terminalSafe
        let game = view["game"] ?? .null
        func number(_ key: String) -> Int { game[key]?.intValue ?? 0 }
        let title = [game["title"]?.stringValue ?? "BirthdayQuest"] + (gameName.map { ["game \($0.terminalSafe)"] } ?? [])
            + ["day \(number("day"))", "version \(version)"]
        var lines = Self.joined(title, columns: columns).map(style.bold)
        lines += Self.joined(["Points \(number("points")) ✦ (earned \(number("earned")), spent \(number("spent")))"], columns: columns)
        lines += Self.joined(["Challenges \(number("challenges_completed"))/\(number("challenges_total")) done",
                              "dares hidden \(number("secrets_hidden")), found \(number("secrets_found")), completed \(number("secrets_completed"))"],
                             columns: columns)
        lines += Self.joined(["Rewards \(number("rewards_unlocked"))/\(number("rewards_total")) unlocked",
                              "final badge " + (game["final_badge"]?.boolValue == true ? style.green("unlocked") : "locked")], columns: columns)
        lines.append(style.bold("Characters"))
        for (id, character) in (view["characters"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let claimed = character["claimed"]?.boolValue == true
            let role = padded(character["role"]?.stringValue ?? "?", 10)
            func row(name: Bool, connections: (Int) -> String) -> String {
                let online = connected[id].map { $0 == 0 ? style.dim(" · offline") : style.green(" · online") + connections($0) } ?? ""
                return "  \(padded(id, 8)) " + (name ? padded(character["name"]?.stringValue ?? id, 10) + " " : "") + role + " "
                    + (claimed ? style.green("claimed") : style.dim("free")) + (claimed ? online : "")
            }
            let full = row(name: true) { $0 > 1 ? " (\($0) connections)" : "" }
            // A phone's screen: without the name (the id says it) and with the count short, rather than wrapped.
            let narrow = columns.map { full.withoutEscapes.terminalColumns > $0 } ?? false
            lines.append(narrow ? row(name: false) { $0 > 1 ? " (\($0))" : "" } : full)
        }
        let drafts = (view["challenges"]?.objectValue ?? [:]).filter { $0.value["secret"]?.boolValue == true }
        if !drafts.isEmpty {
            lines.append(style.bold("Dares"))
            for (id, dare) in drafts.sorted(by: { $0.key < $1.key }) {
                let head = "  \(padded(id, 12)) by \(padded(dare["author"]?.stringValue ?? "?", 8)) \(padded(dare["status"]?.stringValue ?? "?", 9))  "
                // Cut to the screen like the events below: a player's long title would wrap the rows under it away.
                let title = dare["title"]?.stringValue ?? ""
                let beside = columns.map { $0 - head.terminalColumns - 2 } ?? title.terminalColumns
                // A phone's screen leaves no room beside the row: the title goes under it. Without a
                // width (a pipe), nothing is cut, a short title included.
                let under = columns != nil && beside < Self.shortestTitleShown
                let room = under ? (columns ?? 0) - 6 : beside
                let quoted = "“" + (title.terminalColumns <= room ? title : fitted(title, max(2, room))) + "”"
                lines += under ? [String(head.dropLast(2)), "    " + quoted] : [head + quoted]
            }
        }
        lines.append(style.bold(newestEventsHeading))
        if events.isEmpty { lines.append(style.dim("  none")) }
        for event in events { lines.append("  " + Self.event(event, style: style, columns: columns.map { $0 - 2 })) }
        return lines
    }

    /// `parts` joined with " · ", a new line started between two where the screen would
    /// otherwise break one of them (a part wider than the screen is still the terminal's to wrap).
    static func joined(_ parts: [String], columns: Int?) -> [String] {
        guard let columns else { return [parts.joined(separator: " · ")] }
        var lines: [String] = []
        var current = ""
        for part in parts {
            let longer = current.isEmpty ? part : current + " · " + part
            if current.isEmpty || longer.withoutEscapes.terminalColumns <= columns {
                current = longer
            } else {
                lines.append(current)
                current = part
            }
        }
        return lines + [current]
    }

    /// One event on one line: its data cut at 100 characters, or to what `columns` leaves.
    static func event(_ event: JSONValue, style: Style, columns: Int? = nil) -> String {
        let event = event.terminalSafe
        let version = event["version"]?.intValue ?? 0
        var at = event["at"]?.stringValue ?? ""
        let actor = event["actor"]?.stringValue ?? (event["actor"]?.isNull == false ? event["actor"]!.serialized() : "system")
        let type = event["type"]?.stringValue ?? "?"
        func head() -> String { "v\(version) \(at) \(type) by \(actor) " }
        // A narrow screen, with under 10 columns left for the data: the time of day alone (the
        // date is the weekend's), and at worst the row cut.
        if let columns, head().terminalColumns + 10 > columns, at.count >= 19 {
            at = String(at.dropFirst(11).prefix(8))
        }
        if let columns, head().terminalColumns > columns {
            return fitted(head(), columns)
        }
        let room = columns.map { min(100, $0 - head().terminalColumns) } ?? 100
        let data = event["data"].map { $0.serialized(sortedKeys: true) } ?? ""
        let shortData = data.terminalColumns <= room ? data : room > 1 ? fitted(data, room) : ""
        return "\(style.cyan("v\(version)")) \(style.dim(at)) \(type) by \(actor) \(style.dim(shortData))"
    }
}
