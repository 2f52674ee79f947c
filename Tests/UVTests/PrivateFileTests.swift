import Foundation
import POSIXSupport
import Testing

/// Files for their owner alone, written whole: and, when asked, only where none is yet.
@Suite struct PrivateFileTests {
    @Test func aFileNotReplacingIsWrittenOnlyWhereNoneIsYet() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bq-private-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("device.json").path

        #expect(try PrivateFile.write(Data("first".utf8), to: path, replacing: false))
        #expect(try !PrivateFile.write(Data("second".utf8), to: path, temporarySuffix: ".other", replacing: false))
        #expect(FileManager.default.contents(atPath: path) == Data("first".utf8), "the one there is left as found")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try PrivateFile.write(Data("third".utf8), to: path))
        #expect(FileManager.default.contents(atPath: path) == Data("third".utf8), "replacing, as by default")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["device.json"], "no temporary left")
    }
}
