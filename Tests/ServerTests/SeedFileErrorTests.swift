import Foundation
@testable import Server
import Testing

/// A seed path that cannot be read says why, for the organizer who typed it.
@Suite struct SeedFileErrorTests {
    @Test func aDirectoryGivenAsTheSeedIsNamedSoThroughALinkToo() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let folder = dir.path + "/seeds"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: folder)
        #expect(message(readingSeed: folder) == "\(folder): cannot read the seed file: it is a directory")
        #expect(message(readingSeed: dir.path + "/link") == "\(dir.path)/link: cannot read the seed file: it is a directory")
        #expect(message(readingSeed: dir.path + "/none.json") == "\(dir.path)/none.json: cannot read the seed file: No such file or directory")
    }

    /// A seed is fixed in a text editor: a JSON mistake is placed by line and column.
    @Test func aSeedThatIsNotJSONIsPlacedByLineAndColumn() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let path = dir.path + "/broken.json"
        try Data("{\n  \"title\": \"x\",\n  \"characters\": [ \"a\" \"b\" ]\n}\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(message(readingSeed: path) == "\(path): not valid JSON: unexpected character '\"' at byte 40 (line 3, column 23)")
    }

    private func message(readingSeed path: String) -> String? {
        do {
            _ = try GameLoader.readSeed(path: path)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
