import Foundation
@testable import Server
import Testing

/// The copy of the shipped seed built into the executable must be the file, byte for byte: a
/// server started away from the repository must seed the same game as one started in it.
@Suite struct BuiltInSeedTests {
    @Test func theBuiltInSeedIsTheShippedFile() throws {
        let file = ConfigDocsTests.root.appendingPathComponent(BuiltInSeed.path)
        let shipped = try Data(contentsOf: file)
        #expect(Array(BuiltInSeed.text.utf8) == Array(shipped),
                "\(BuiltInSeed.path) changed: run scripts/embed-seed.sh to build the new one in")
        let fromFile = try GameLoader.readSeed(path: file.path)
        let builtIn = try GameLoader.parseSeed(Array(BuiltInSeed.text.utf8), name: "built-in")
        #expect(builtIn.hash == fromFile.hash)
    }

    /// A seed saved by an editor that begins UTF-8 with a byte-order mark is the same seed.
    @Test func aByteOrderMarkBeforeASeedIsSkipped() throws {
        let plain = try GameLoader.parseSeed(Array(BuiltInSeed.text.utf8), name: "plain")
        let marked = try GameLoader.parseSeed([0xEF, 0xBB, 0xBF] + Array(BuiltInSeed.text.utf8), name: "marked")
        #expect(marked.hash == plain.hash)
    }
}
