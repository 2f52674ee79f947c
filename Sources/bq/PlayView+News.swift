import Foundation
import JSON

/// What changed between two views, told as news: the lines `bq play` prints as live updates.
extension PlayView {
    /// The most timeline entries one piece of news lists; the newest are kept.
    static let newsTimelineEntries = 8

    /// One line per change a person cares about between two versions of the view. The
    /// timeline's entries come first, in the order they happened; then how things stand now.
    /// `severalCommits`: more than one change between the two that the timeline does not
    /// account for (news caught up after a reconnect, or changes committed together), so an
    /// adjustment told may be the sum of several. `own`: what the person's own changes
    /// committed in between, which their replies tell, so it is not news.
    func changes(from old: PlayView, severalCommits: Bool = false, own: OwnChange = OwnChange()) -> [String] {
        var lines: [String] = []
        // The points that moved by the person's own command, which its reply accounts for.
        var pointsToldByReply = 0
        var entries: [JSONValue] = []
        for entry in timeline.dropFirst(old.timeline.count) {
            guard !own.tells(entry) else {
                pointsToldByReply &+= Self.pointsIn(subtitle: entry["subtitle"]?.stringValue)
                continue
            }
            entries.append(entry)
        }
        // A long absence, or a busy hour caught up at once, would scroll everything else away.
        if entries.count > Self.newsTimelineEntries {
            let earlier = entries.count - Self.newsTimelineEntries
            lines.append(style.dim("… \(earlier) earlier \(earlier == 1 ? "entry" : "entries") on the timeline (type timeline to see them)"))
        }
        for entry in entries.suffix(Self.newsTimelineEntries) {
            lines += timelineEntryLines(entry, lead: "★ ")
        }
        // The person's own doings are told by their command's reply, not again as news.
        lines += characterNews(from: old, own: own) + challengeNews(from: old, own: own) + rewardNews(from: old, own: own)
        let oldHidden = old.game["secrets_hidden"]?.intValue ?? 0
        let hidden = game["secrets_hidden"]?.intValue ?? 0
        if myRole == "birthday", hidden > oldHidden {
            lines.append(style.magenta("A secret dare arrived: ??? now hides \(hidden)"))
        }
        if points != old.points {
            // Completions and unlocks explain themselves in the timeline ("+35 ✦", "-100 ✦");
            // an organizer's adjustment has no entry there (GAME.md), so what the new entries
            // do not explain is named here, also when one patch carries both.
            // Wrapping arithmetic: a faulty server's numbers may be anything, and a wrong sum
            // shown is better than a client that stops (the real server's stay below 2^53).
            let explained = timeline.dropFirst(old.timeline.count).reduce(0) { $0 &+ Self.pointsIn(subtitle: $1["subtitle"]?.stringValue) }
            // The person's own adjustments are their replies' to tell; the rest is someone else's.
            let adjusted = points &- old.points &- explained &- (own.adjustment ?? 0)
            pointsToldByReply &+= own.adjustment ?? 0
            if adjusted != 0 {
                lines.append("The organizer adjusted the points: \(adjusted > 0 ? "+" : "")\(adjusted) ✦" + (severalCommits ? " in all" : ""))
            }
            if !own.tellsPoints || points &- old.points != pointsToldByReply { lines.append(pointsLine()) }
        }
        if let day = game["day"]?.intValue, day != old.game["day"]?.intValue, day != own.day {
            lines.append("It is now day \(day).")
        }
        return lines
    }

    /// Other players joining or leaving.
    private func characterNews(from old: PlayView, own: OwnChange) -> [String] {
        var lines: [String] = []
        for (id, character) in json["characters"]?.objectValue ?? [:] where id != myCharacter {
            let was = old.json["characters"]?[id]?["claimed"]?.boolValue ?? false
            let now = character["claimed"]?.boolValue ?? false
            if was != now, now || !own.unclaims.contains(id) {
                lines.append("\(name(of: id)) \(now ? "joined the game" : "left the game (unclaimed)")")
            }
        }
        return lines
    }

    /// New challenges, dares written or delivered, and the organizer's edits.
    private func challengeNews(from old: PlayView, own: OwnChange) -> [String] {
        var lines: [String] = []
        for (id, challenge) in challenges {
            let before = old.json["challenges"]?[id]
            let status = challenge["status"]?.stringValue
            let title = challenge["title"]?.stringValue ?? ""
            let author = challenge["author"]?.stringValue
            if challenge["secret"]?.boolValue == true, author == myCharacter { continue }
            if before == nil {
                if challenge["secret"]?.boolValue == true {
                    if status == "delivered" || status == "draft" {
                        lines.append("\(name(of: author)) \(status == "draft" ? "is writing" : "delivered") a dare: “\(title)”")
                    }
                } else if !own.addsChallenge {
                    lines.append("New on the board: \(id) “\(title)” (\(challenge["points"]?.intValue ?? 0) ✦)")
                }
            } else if before?["status"]?.stringValue == "draft", status == "delivered" {
                lines.append("\(name(of: author)) delivered a dare: “\(title)”")
            } else if status == "draft", before?["title"] != challenge["title"] || before?["description"] != challenge["description"]
                        || before?["points"] != challenge["points"] {
                lines.append("\(name(of: author)) edited a dare: “\(title)” (\(challenge["points"]?.intValue ?? 0) ✦)")
            } else if let before, challenge["secret"]?.boolValue != true, myRole != "organizer", !own.edits.contains(id),
                      Self.challengeFields.contains(where: { before[$0] != challenge[$0] }) {
                let points = challenge["points"]?.intValue ?? 0
                lines.append(before["points"] != challenge["points"]
                    ? "The organizer changed \(id) “\(title)”: now \(points) ✦" : "The organizer edited \(id) “\(title)”")
            }
        }
        return lines
    }

    /// New gifts and the organizer's edits of them (an unlock is the timeline's to tell).
    private func rewardNews(from old: PlayView, own: OwnChange) -> [String] {
        var lines: [String] = []
        for (id, reward) in rewards {
            let title = reward["title"]?.stringValue ?? ""
            guard let before = old.json["rewards"]?[id] else {
                if !own.addsReward { lines.append("New reward: \(id) “\(title)” from \(reward["from"]?.stringValue ?? "?")") }
                continue
            }
            // A gift's content appearing is its unlock (told by the timeline), not an edit.
            let contentEdited = before["content"] != nil && reward["content"] != nil && before["content"] != reward["content"]
            guard myRole != "organizer", !own.edits.contains(id), contentEdited || Self.rewardFields.contains(where: { before[$0] != reward[$0] }) else { continue }
            let cost = reward["cost"]?.intValue ?? 0
            lines.append(before["cost"] != reward["cost"]
                ? "The organizer changed the gift \(id) “\(title)”: now \(cost) ✦" : "The organizer edited the gift \(id) “\(title)”")
        }
        return lines
    }
}

extension PlayView {
    /// What the organizer's `save_challenge` and `save_reward` change, as players see it: an
    /// edit of these is news (a completion or an unlock changes other fields).
    static let challengeFields = ["title", "description", "option_b", "points", "difficulty", "category"]
    static let rewardFields = ["from", "from_character", "title", "teaser", "type", "cost"]

    /// The points a timeline entry's subtitle says it earned or spent: "+35 ✦" or "-100 ✦";
    /// 0 for "free" and the entries that move no points.
    static func pointsIn(subtitle: String?) -> Int {
        guard let subtitle, let sign = subtitle.first, sign == "+" || sign == "-", subtitle.hasSuffix(" ✦"),
              let amount = Int(subtitle.dropFirst().dropLast(2)) else { return 0 }
        return sign == "+" ? amount : 0 &- amount
    }
}
