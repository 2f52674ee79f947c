import Foundation
import JSON

/// Read access to one viewer's view (PROTOCOL.md "View shape"), and how `bq play` shows it.
struct PlayView {
    let json: JSONValue
    let style: Style
    /// The terminal's width, read once per screen; nil for a pipe.
    let columns: Int?

    init(json: JSONValue, style: Style) {
        self.json = json.terminalSafe
        self.style = style
        columns = Terminal.columns
    }

    var game: JSONValue { json["game"] ?? .null }

    /// The id of the challenge or reward `typed` names in any case (`C02` for c02); as typed
    /// when none does, for the server to refuse.
    func itemId(_ typed: String) -> String {
        json.memberId(typed, in: ["challenges", "rewards"]) ?? typed
    }
    var myCharacter: String? { json["me"]?["character"]?.stringValue }
    var myRole: String { json["me"]?["role"]?.stringValue ?? "?" }
    var points: Int { game["points"]?.intValue ?? 0 }
    var challenges: [(id: String, value: JSONValue)] { sortedMembers(json["challenges"]) }
    var rewards: [(id: String, value: JSONValue)] {
        // `sortedMembers` is by id already, and a stable sort keeps that among equal orders.
        sortedMembers(json["rewards"]).enumerated()
            .sorted { ($0.element.value["order"]?.intValue ?? 0, $0.offset) < ($1.element.value["order"]?.intValue ?? 0, $1.offset) }
            .map(\.element)
    }
    var timeline: [JSONValue] { json["timeline"]?.arrayValue ?? [] }

    func name(of character: String?) -> String {
        guard let character else { return "someone" }
        return json["characters"]?[character]?["name"]?.stringValue ?? character
    }

    var birthdayName: String {
        let members = json["characters"]?.objectValue ?? [:]
        return members.first { $0.value["role"]?.stringValue == "birthday" }?.value["name"]?.stringValue ?? "The birthday person"
    }

    /// The dare this viewer wrote, if any.
    var myDare: (id: String, value: JSONValue)? {
        guard let me = myCharacter else { return nil }
        return challenges.first { $0.value["secret"]?.boolValue == true && $0.value["author"]?.stringValue == me }
    }

    // MARK: Screens

    func header() -> [String] {
        let title = game["title"]?.stringValue ?? "BirthdayQuest"
        let day = game["day"]?.intValue ?? 1
        var lines = [style.bold("\(title) · day \(day)") + "  " + style.dim("you are \(name(of: myCharacter)) (\(myRole))")]
        lines.append(pointsLine())
        return lines
    }

    /// The game's balance is the birthday person's wallet: other players see whose it is.
    func pointsLine() -> String {
        (myRole == "birthday" ? "Points: " : "\(birthdayName)'s points: ") + style.bold("\(points) ✦")
            + style.dim("  (earned \(game["earned"]?.intValue ?? 0), spent \(game["spent"]?.intValue ?? 0))")
    }

    func badgeLine() -> String {
        let unlocked = game["rewards_unlocked"]?.intValue ?? 0
        let total = game["rewards_total"]?.intValue ?? 0
        // Ten cells whatever the numbers: a faulty server's could be anything (12 of 9, -1, 2^63).
        let filled = total > 0 ? Int(Double(min(max(unlocked, 0), total)) * 10 / Double(total)) : 0
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: 10 - filled)
        if game["final_badge"]?.boolValue == true {
            return "Final badge: " + style.green("🏅 UNLOCKED") + " (\(unlocked)/\(total) rewards)"
        }
        return "Final badge: \(bar) \(unlocked)/\(total) rewards unlocked"
    }

    /// `rows`: the terminal's height, when known. A screen taller than it scrolls its top, with
    /// the points, off: they are said again at its foot then.
    func home(rows: Int? = nil) -> [String] {
        var lines = header()
        if myRole == "birthday" { lines.append(badgeLine()) }
        lines.append("")
        lines += board()
        lines.append("")
        if myRole == "birthday" {
            // The gifts' contents make the home screen scroll off: `rewards` and `show` have them.
            lines += rewardsList(withContents: false)
        } else {
            lines += dareStatus()
            lines.append("")
            lines += rewardsGiven()
        }
        lines.append("")
        lines += timelineLines(last: 5)
        if let rows, lines.count + 1 >= rows {
            lines.append("")
            lines.append(pointsLine())
            if myRole == "birthday" { lines.append(badgeLine()) }
        }
        lines.append(style.dim("Type help for commands."))
        return lines
    }

    func board() -> [String] {
        let done = game["challenges_completed"]?.intValue ?? 0
        let total = game["challenges_total"]?.intValue ?? 0
        var lines = [style.bold("Challenges") + " (\(done)/\(total) done)"]
        lines += laidOut(challenges.map { challengeRow($0.0, $0.1) }).map { "  " + $0 }
        let hidden = game["secrets_hidden"]?.intValue ?? 0
        if myRole == "birthday" {
            if hidden > 0 {
                lines.append("  " + style.magenta("??? \(hidden) hidden dare\(hidden == 1 ? "" : "s")") + style.dim(" (type discover to reveal)"))
            } else {
                lines.append("  " + style.dim("??? no hidden dares"))
            }
        }
        return lines
    }

    func challengeRow(_ id: String, _ challenge: JSONValue) -> ListRow {
        let status = challenge["status"]?.stringValue ?? "open"
        let mark: String
        let statusText: String
        let paint: (String) -> String
        switch status {
        case "completed":
            mark = style.green("✓")
            // Which option of a 2-in-1 was done (A counts as much as B).
            let option = challenge["option"]?.stringValue == "b" ? " (option B)" : challenge.optionB != nil ? " (option A)" : ""
            let forced = challenge["forced"]?.boolValue == true ? " (forced)" : ""
            statusText = "done\(option)\(forced)"
            paint = style.green
        case "draft": mark = "✎"; statusText = "draft"; paint = style.yellow
        case "delivered": mark = "✉"; statusText = "delivered"; paint = style.magenta
        default: mark = "·"; statusText = "open"; paint = { $0 }
        }
        // Once done, the option done: option B has its own title.
        let doneAsB = status == "completed" && challenge["option"]?.stringValue == "b"
        let title = (doneAsB ? challenge.optionB?["title"]?.stringValue : nil) ?? challenge["title"]?.stringValue ?? id
        var facts: [String] = []
        if challenge["secret"]?.boolValue == true {
            facts.append("dare by \(name(of: challenge["author"]?.stringValue))")
        } else {
            if let category = challenge["category"]?.stringValue { facts.append(category) }
            if let difficulty = challenge["difficulty"]?.stringValue { facts.append(difficulty) }
        }
        if challenge.optionB != nil { facts.append("2-in-1") }
        return ListRow(mark: mark, id: id, title: title, status: statusText, paint: paint,
                       price: "\(challenge["points"]?.intValue ?? 0) ✦", facts: facts.joined(separator: " · "))
    }

    func rewardsList(withContents: Bool = true) -> [String] {
        var lines = [style.bold("Rewards")]
        let listed = rewards
        let rows = laidOut(listed.map { rewardRow($0.0, $0.1) })
        for ((_, reward), row) in zip(listed, rows) {
            lines.append("  " + row)
            if withContents, myRole == "birthday" || reward["unlocked"]?.boolValue == true, let content = reward["content"] {
                lines += contentLines(content, indent: "        ")
            }
        }
        return lines
    }

    func rewardsGiven() -> [String] {
        guard let me = myCharacter else { return [] }
        let mine = rewards.filter { $0.value["from_character"]?.stringValue == me }
        var lines = [style.bold("Rewards you gave")]
        if mine.isEmpty { lines.append(style.dim("  none")) }
        lines += laidOut(mine.map { rewardRow($0.0, $0.1) }).map { "  " + $0 }
        return lines
    }

    func rewardRow(_ id: String, _ reward: JSONValue) -> ListRow {
        let cost = reward["cost"]?.intValue ?? 0
        let status: String
        let mark: String
        let paint: (String) -> String
        if reward["unlocked"]?.boolValue == true {
            mark = style.green("✓"); status = "unlocked"; paint = style.green
        } else if cost <= points {
            mark = style.yellow("$"); status = "affordable"; paint = style.yellow
        } else {
            mark = style.dim("·"); status = "locked"; paint = style.dim
        }
        let title = reward["title"]?.stringValue ?? id
        let facts = "\(reward["type"]?.stringValue ?? "?") · from \(reward["from"]?.stringValue ?? "?")"
        return ListRow(mark: mark, id: id, title: title, status: status, paint: paint, price: "\(cost) ✦", facts: facts)
    }

    /// One row of the board or the rewards: mark, id, title, status (`paint` colours it), the
    /// points it gives or costs, and other facts.
    struct ListRow {
        let mark: String
        let id: String
        let title: String
        let status: String
        let paint: (String) -> String
        let price: String
        let facts: String
    }

    /// Rows laid out together, in columns that line up: ids as wide as the widest among them,
    /// the titles 32 columns and two spaces, then the status as wide as the widest, the points
    /// (aligned right), and the other facts, which vary most in length. On a terminal too narrow
    /// for the widest row, the titles give up room first (down to 16), then a row's other facts
    /// are cut, never the points. Narrower still (a phone), a row is its mark, id, title and
    /// points alone: the mark tells the status. A row never wraps. Lists indent rows by 2, which
    /// the width allows for.
    func laidOut(_ rows: [ListRow]) -> [String] {
        let idWidth = max(4, rows.map { $0.id.terminalColumns }.max() ?? 0)
        let statusWidth = rows.map { $0.status.terminalColumns }.max() ?? 0
        let priceWidth = rows.map { $0.price.terminalColumns }.max() ?? 0
        // Indent; mark, id and status, each with the space after it; the two spaces after the
        // title (one, and a title of the full width reads as running into its status); points.
        let fixed = 2 + 2 + idWidth + 1 + statusWidth + 1 + 2 + priceWidth
        let minimumTitle = 16
        if let columns, columns - fixed < minimumTitle {
            let titleWidth = max(4, columns - (2 + 2 + idWidth + 1 + 1 + priceWidth))
            return rows.map { row in
                "\(row.mark) \(style.cyan(padded(row.id, idWidth))) \(row.paint(fitted(row.title, titleWidth))) "
                    + style.dim(rightAligned(row.price, priceWidth))
            }
        }
        var titleWidth = 32
        if let columns {
            let widestFacts = rows.map { $0.facts.isEmpty ? 0 : 3 + $0.facts.terminalColumns }.max() ?? 0
            titleWidth = max(minimumTitle, min(titleWidth, columns - fixed - widestFacts))
        }
        return rows.map { row in
            var shownFacts = row.facts.isEmpty ? "" : " · " + row.facts
            if let columns {
                let room = columns - fixed - titleWidth
                if shownFacts.terminalColumns > room { shownFacts = room > 4 ? fitted(shownFacts, room) : "" }
            }
            return "\(row.mark) \(style.cyan(padded(row.id, idWidth))) \(fitted(row.title, titleWidth))  "
                + "\(row.paint(padded(row.status, statusWidth))) \(style.dim(rightAligned(row.price, priceWidth) + shownFacts))"
        }
    }

    private func rightAligned(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.terminalColumns)) + text
    }

    func contentLines(_ content: JSONValue, indent: String) -> [String] {
        var lines: [String] = []
        if let text = content["text"]?.stringValue, !text.isEmpty { lines += wrapped("“\(text)”", indent: indent, columns: columns) }
        for url in content["urls"]?.arrayValue ?? [] {
            if let url = url.stringValue { lines.append(indent + "🔗 " + style.blue(url)) }
        }
        return lines
    }

    func dareStatus() -> [String] {
        guard let (id, dare) = myDare else {
            return [style.bold("Your dare") + ": none yet. " + style.dim("dare save \"title\" \"description\" <25|50|75|100>")]
        }
        let status = dare["status"]?.stringValue ?? "?"
        let explained: String
        switch status {
        case "draft": explained = "draft (only you and the organizer see it; edit with dare save, send with dare deliver)"
        case "delivered": explained = "delivered, still hidden from \(birthdayName)"
        case "open": explained = "discovered by \(birthdayName), not done yet"
        case "completed": explained = "completed by \(birthdayName)!"
        default: explained = status
        }
        return [style.bold("Your dare") + " \(style.cyan(id)): \(dare["title"]?.stringValue ?? "") · \(dare["points"]?.intValue ?? 0) ✦"]
            + wrapped(dare["description"]?.stringValue ?? "", indent: "  ", columns: columns)
            + wrapped("status: \(explained)", indent: "  ", columns: columns)
    }

    func timelineLines(last: Int? = nil) -> [String] {
        var entries = timeline
        if let last, entries.count > last { entries = Array(entries.suffix(last)) }
        var lines = [style.bold("Timeline") + (last != nil && timeline.count > (last ?? 0) ? style.dim(" (latest \(last ?? 0) of \(timeline.count))") : "")]
        if entries.isEmpty { lines.append(style.dim("  nothing yet")) }
        for entry in entries { lines += timelineEntryLines(entry, lead: "  ") }
        return lines
    }

    /// "Sat 21:26" in the person's own time zone: the log keeps UTC, and a weekend's timeline
    /// needs its days.
    static func localTime(_ rfc3339: String) -> String {
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = parser.date(from: rfc3339) else { return String(rfc3339.dropFirst(11).prefix(5)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "EEE HH:mm"
        return formatter.string(from: date)
    }

    /// One entry, wrapped under its text rather than under its time: a long title or a giver's
    /// name would otherwise run past the terminal's edge and go on from its first column. The
    /// amount ("+50 ✦", "3 of 9 gifts") stays whole on the last line.
    func timelineEntryLines(_ entry: JSONValue, lead: String) -> [String] {
        let (at, text, amount) = timelineParts(entry)
        // Under the text when that leaves a line room for a few words; else the time has a
        // line of its own, and the text goes on under it.
        let underText = lead.terminalColumns + at.terminalColumns + 1
        let room = columns.map { $0 - underText >= narrowestWrap } ?? true
        let hang = String(repeating: " ", count: room ? underText : lead.terminalColumns)
        let keptWhole = amount.replacingOccurrences(of: " ", with: "\u{A0}")
        var lines = wrapped(text + (amount.isEmpty ? "" : " " + keptWhole), indent: hang, columns: columns)
        if room {
            lines[0] = lead + style.dim(at) + " " + lines[0].dropFirst(hang.count)
        } else {
            lines.insert(lead + style.dim(at), at: 0)
        }
        if !amount.isEmpty, let last = lines.indices.last, lines[last].hasSuffix(keptWhole) {
            lines[last] = lines[last].dropLast(keptWhole.count) + (amount.hasPrefix("-") ? style.yellow(amount) : style.green(amount))
        }
        return lines
    }

    /// When, what, and the points or gifts it moved (empty when none).
    private func timelineParts(_ entry: JSONValue) -> (at: String, text: String, amount: String) {
        let at = entry["at"]?.stringValue.map(Self.localTime) ?? ""
        let title = entry["title"]?.stringValue ?? ""
        let subtitle = entry["subtitle"]?.stringValue ?? ""
        let from = entry["from"]?.stringValue
        let who = birthdayName
        let text: String
        switch entry["kind"]?.stringValue {
        case "challenge_completed":
            // A forced completion is the organizer's doing, not the birthday person's.
            let forced = entry["ref"]?.stringValue.flatMap { json["challenges"]?[$0]?["forced"]?.boolValue } == true
            text = forced ? "“\(title)” marked done by the organizer" : "\(who) completed “\(title)”"
        // Said without who: the organizer may have unlocked it (force-unlock), and the view
        // does not tell.
        case "reward_unlocked": text = "Gift unlocked: “\(title)”" + (from.map { " from \($0)" } ?? "")
        case "secret_discovered":
            // Marked done by the organizer before anyone found it: found in the same commit, so
            // the completion's time (one event stamps both) is this entry's.
            let dare = entry["ref"]?.stringValue.flatMap { json["challenges"]?[$0] }
            let forced = dare?["forced"]?.boolValue == true && dare?["completed_at"] == entry["at"]
            let by = from.map { " by \($0)" } ?? ""
            text = forced ? "A dare\(by) came out when the organizer marked it done: “\(title)”" : "\(who) discovered a dare\(by): “\(title)”"
        case "final_badge":
            // The last gift's unlock brings it in the same commit, so at the same time; at any
            // other moment it is the organizer's doing, which a 0 of 9 beside it would not explain.
            let previous = entry["seq"]?.intValue.flatMap { $0 >= 2 && $0 - 2 < timeline.count ? timeline[$0 - 2] : nil }
            let earned = previous?["kind"] == "reward_unlocked" && previous?["at"] == entry["at"]
            text = earned ? "🏅 The final badge is unlocked!" : "🏅 The organizer unlocked the final badge early!"
        default: text = title
        }
        return (at, text, subtitle)
    }

    func whoami() -> String {
        "You are \(name(of: myCharacter)) (\(myRole))."
    }

    /// The full card of a challenge or reward.
    func show(_ typed: String) -> [String]? {
        let id = itemId(typed)
        if let challenge = json["challenges"]?[id] {
            var lines = [style.bold("\(id) · \(challenge["title"]?.stringValue ?? "")")] + laidOut([challengeRow(id, challenge)])
            let optionB = challenge.optionB
            if optionB != nil { lines.append(style.bold("  Option A: \(challenge["title"]?.stringValue ?? "")")) }
            lines += wrapped(challenge["description"]?.stringValue ?? "", indent: "  ", columns: columns)
            if let optionB {
                lines.append(style.bold("  Option B: \(optionB["title"]?.stringValue ?? "")"))
                lines += wrapped(optionB["description"]?.stringValue ?? "", indent: "  ", columns: columns)
            }
            if let proof = challenge["proof"], !proof.isNull {
                switch proof["kind"]?.stringValue {
                case "photo": lines.append("  proof: photo " + style.blue(proof["url"]?.stringValue ?? ""))
                case "text": lines += wrapped("proof: “\(proof["text"]?.stringValue ?? "")”", indent: "  ", columns: columns)
                default: lines.append("  proof: done")
                }
            }
            return lines
        }
        if let reward = json["rewards"]?[id] {
            var lines = [style.bold("\(id) · \(reward["title"]?.stringValue ?? "")")] + laidOut([rewardRow(id, reward)])
                + wrapped(reward["teaser"]?.stringValue ?? "", indent: "  ", columns: columns)
            if let content = reward["content"] {
                lines += contentLines(content, indent: "  ")
            } else {
                lines.append(style.dim("  (its content shows once it is unlocked)"))
            }
            return lines
        }
        return nil
    }
}

/// Members by id, numbers in ids by value: the organizer's c100 comes after c99, not after c10.
private func sortedMembers(_ object: JSONValue?) -> [(id: String, value: JSONValue)] {
    (object?.objectValue ?? [:]).sorted { $0.key.compare($1.key, options: .numeric) == .orderedAscending }
        .map { (id: $0.key, value: $0.value) }
}

extension JSONValue {
    /// A challenge's option B; nil when it is no 2-in-1 (the field null, or absent).
    var optionB: JSONValue? {
        // Not `flatMap { $0.isNull ? nil : $0 }`: there `nil` is JSON's null, not no value.
        guard let value = self["option_b"], !value.isNull else { return Optional.none }
        return value
    }
}
