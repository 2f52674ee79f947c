/// Splits a typed command into words: spaces separate, "double" or 'single' quotes group,
/// a backslash escapes the next character. nil when a quote is left open: the words after it
/// would otherwise be sent as one, which is seldom what was meant. A line that begins with `#`
/// (after blanks) is a comment: no words.
func splitCommandLine(_ line: String) -> [String]? {
    // A comment, as in a shell script: a script of commands explains itself.
    if line.drop(while: { $0 == " " || $0 == "\t" }).first == "#" { return [] }
    var words: [String] = []
    var current = ""
    var inWord = false
    var quote: Character?
    var escaped = false
    for character in line {
        if escaped {
            current.append(character)
            escaped = false
            continue
        }
        if character == "\\" && quote != "'" {
            escaped = true
            inWord = true
            continue
        }
        if let open = quote {
            if character == open { quote = nil } else { current.append(character) }
            continue
        }
        if character == "\"" || character == "'" {
            quote = character
            inWord = true
        } else if character == " " || character == "\t" {
            if inWord { words.append(current) }
            current = ""
            inWord = false
        } else {
            current.append(character)
            inWord = true
        }
    }
    if quote != nil { return nil }
    if inWord { words.append(current) }
    return words
}
