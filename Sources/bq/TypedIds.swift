import JSON

/// Ids as people type them. The seed's ids are lower case (c02, r03, mia), and people type
/// `C02` or `Mia` as readily: a typed id that names no member exactly names the one it equals
/// in any case, when there is one. A typed id that names none is left as typed, for the server
/// to refuse in its own words.
extension JSONValue {
    /// The id of the member of `sections` (of a view: "challenges", "rewards", "characters")
    /// that `typed` names, exactly or else in any case; nil when none does.
    func memberId(_ typed: String, in sections: [String]) -> String? {
        let members = sections.compactMap { self[$0]?.objectValue }
        if members.contains(where: { $0[typed] != nil }) { return typed }
        let wanted = typed.lowercased()
        for section in members {
            if let id = section.keys.sorted().first(where: { $0.lowercased() == wanted }) { return id }
        }
        return nil
    }
}

/// The id of the character `typed` names, among `characters` (id and name each): its id,
/// exactly or in any case, else its name in any case ("Mia" for mia); nil when none does. A
/// name two characters share names neither: a guess would act on the wrong person.
func characterId(_ typed: String, among characters: [(id: String, name: String?)]) -> String? {
    if characters.contains(where: { $0.id == typed }) { return typed }
    let wanted = typed.lowercased()
    if let id = characters.first(where: { $0.id.lowercased() == wanted })?.id { return id }
    let named = characterIds(named: typed, among: characters)
    return named.count == 1 ? named[0] : nil
}

/// The ids of the characters whose name is `typed`, in any case.
func characterIds(named typed: String, among characters: [(id: String, name: String?)]) -> [String] {
    characters.filter { $0.name?.lowercased() == typed.lowercased() }.map(\.id)
}
