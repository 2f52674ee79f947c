import Foundation
import Testing

/// The domain decides from its inputs alone: no clock, no randomness, no I/O, and
/// no imports at all (so not even Foundation can sneak one in). This test reads
/// the sources and keeps it so.
@Suite struct PurityTests {
    /// Source text without comments: a doc comment may say "random token" freely.
    static func code(ofSwiftFilesUnder directory: String) throws -> [(name: String, code: String)] {
        let folder = Repository.root.appendingPathComponent(directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        return try names.map { name in
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            return (name, stripComments(text))
        }
    }

    /// Drops `/* ... */` blocks and everything after `//` on a line. Crude (a `//` inside a
    /// string literal cuts the rest of that line) but it only ever hides text, never invents it.
    static func stripComments(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let open = rest.range(of: "/*") {
            result += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "*/") else { rest = ""; break }
            rest = rest[close.upperBound...]
        }
        result += rest
        return result.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }
            .joined(separator: "\n")
    }

    static func imports(in code: String) -> [String] {
        code.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("import ") || ($0.hasPrefix("@") && $0.contains(" import ")) }
    }

    /// Ways to reach a clock, randomness, the file system, the network, the process or a thread,
    /// matched as the start of an identifier (so `civilDate(` is not `Date(`).
    static let forbiddenWords = [
        "Date(", "Date.now", "Clock", "ContinuousClock", "SuspendingClock", "clock_gettime", "gettimeofday", "time(",
        "DispatchTime", "CFAbsoluteTime", "UUID(", "FileManager", "FileHandle", "fopen", "fread", "fwrite", "open(",
        "URL(", "URLSession", "ProcessInfo", "getenv", "print(", "Thread", "DispatchQueue", "sleep(", "usleep(", "Task",
        "Glibc", "Darwin", "Foundation",
    ]
    /// Matched anywhere: `SystemRandomNumberGenerator`, `withUnsafeBytes`, `shuffled()`.
    static let forbiddenFragments = ["random", "Random", "shuffle", "unsafe", "Unsafe", "socket", "Socket"]

    static func uses(_ code: String, _ word: String) -> Bool {
        if forbiddenFragments.contains(word) { return code.contains(word) }
        var searchStart = code.startIndex
        while let found = code.range(of: word, range: searchStart..<code.endIndex) {
            let before = found.lowerBound == code.startIndex ? nil : code[code.index(before: found.lowerBound)]
            if !(before.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false) { return true }
            searchStart = found.upperBound
        }
        return false
    }

    static var forbidden: [String] { forbiddenWords + forbiddenFragments }

    @Test func theDomainHasNoImportsAtAll() throws {
        let files = try Self.code(ofSwiftFilesUnder: "Sources/Domain")
        #expect(files.count >= 5, "found the domain's sources")
        for file in files {
            #expect(Self.imports(in: file.code).isEmpty, "Sources/Domain/\(file.name) imports something")
        }
    }

    @Test func theDomainReachesNoClockRandomnessOrIO() throws {
        for file in try Self.code(ofSwiftFilesUnder: "Sources/Domain") {
            for word in Self.forbidden {
                #expect(!Self.uses(file.code, word), "Sources/Domain/\(file.name) uses \"\(word)\"")
            }
        }
    }

    /// Views are as pure as the domain: they import only the two pure layers beneath them.
    @Test func theViewsImportOnlyDomainAndJSON() throws {
        let files = try Self.code(ofSwiftFilesUnder: "Sources/Views")
        #expect(!files.isEmpty)
        for file in files {
            #expect(Set(Self.imports(in: file.code)).isSubset(of: ["import Domain", "import JSON"]), "Sources/Views/\(file.name)")
            for word in Self.forbidden {
                #expect(!Self.uses(file.code, word), "Sources/Views/\(file.name) uses \"\(word)\"")
            }
        }
    }

    @Test func forbiddenWordsAreFoundAtTheStartOfAnIdentifierOnly() {
        #expect(Self.uses("let now = Date()", "Date("))
        #expect(!Self.uses("civilDate(days)", "Date("))
        #expect(Self.uses("var g = SystemRandomNumberGenerator()", "Random"))
    }

    @Test func theCommentStripperKeepsCodeAndDropsComments() {
        let code = Self.stripComments("let a = 1 // random\n/* Date() */ let b = 2\nimport Foo")
        #expect(code == "let a = 1 \n let b = 2\nimport Foo")
        #expect(Self.imports(in: code) == ["import Foo"])
    }
}
