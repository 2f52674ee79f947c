import JSON

/// What a person's own command changes and its reply tells them. The patch carrying the change
/// reaches them before the reply does (the protocol's order), so the same change told as news
/// as well was said twice ("★ Mia completed …", then "Completed …").
struct OwnChange: Sendable {
    /// Timeline entries the reply tells, by kind and ref (`final_badge` has no ref).
    var entries: Set<String> = []
    /// The characters the command unclaims.
    var unclaims: Set<String> = []
    var day: Int?
    var adjustment: Int?
    var addsChallenge = false
    var addsReward = false
    /// The challenges and rewards the command edits.
    var edits: Set<String> = []
    /// The reply names the balance after the change, so a points line for it would repeat it.
    var tellsPoints = false
    /// How many of the commits these changes made leave no timeline entry: the news does not
    /// count them among the changes it has to sum ("in all").
    var commitsOutsideTimeline = 0

    init(entries: [(kind: String, ref: String?)] = [], unclaims: String? = nil, day: Int? = nil, adjustment: Int? = nil,
         addsChallenge: Bool = false, addsReward: Bool = false, edits: String? = nil, tellsPoints: Bool = false) {
        self.entries = Set(entries.map { Self.key($0.kind, $0.ref) })
        self.unclaims = Set(unclaims.map { [$0] } ?? [])
        self.day = day
        self.adjustment = adjustment
        self.addsChallenge = addsChallenge
        self.addsReward = addsReward
        self.edits = Set(edits.map { [$0] } ?? [])
        self.tellsPoints = tellsPoints
        commitsOutsideTimeline = adjustment != nil || day != nil || unclaims != nil || addsChallenge || addsReward || edits != nil ? 1 : 0
    }

    /// Several changes that one update holds: the adjustments add up.
    init(merging changes: [OwnChange]) {
        self.init()
        for change in changes {
            entries.formUnion(change.entries)
            unclaims.formUnion(change.unclaims)
            edits.formUnion(change.edits)
            day = change.day ?? day
            if let adjustment = change.adjustment { self.adjustment = (self.adjustment ?? 0) + adjustment }
            addsChallenge = addsChallenge || change.addsChallenge
            addsReward = addsReward || change.addsReward
            tellsPoints = tellsPoints || change.tellsPoints
            commitsOutsideTimeline += change.commitsOutsideTimeline
        }
    }

    func tells(_ entry: JSONValue) -> Bool {
        entries.contains(Self.key(entry["kind"]?.stringValue ?? "", entry["ref"]?.stringValue))
    }

    private static func key(_ kind: String, _ ref: String?) -> String { kind + " " + (ref ?? "") }
}
