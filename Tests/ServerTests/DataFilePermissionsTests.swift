import Foundation
import Testing

/// The log holds PINs, gift contents and dares: other local users must not read it.
@Suite struct DataFilePermissionsTests {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test func aFreshDataDirectoryAndItsLogAreTheOwnersAlone() throws {
        let parent = try TempDirectory()
        defer { parent.remove() }
        let data = parent.path + "/new-data"
        let server = try ServerHarness(dataDirectory: data)
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 1, "reason": "a commit, so the WAL exists"])

        #expect(try mode(data) & 0o077 == 0)
        for file in ["birthdayquest.sqlite", "birthdayquest.sqlite-wal", "birthdayquest.sqlite-shm"] {
            #expect(try mode(data + "/" + file) & 0o077 == 0, "\(file) is readable by others")
        }
        try server.stop()
    }

    /// The key file never exists with a wider mode, not even for a moment: it is written under
    /// another name, created 0600, and renamed. A start killed while writing it leaves that
    /// other file, which the next start replaces.
    @Test func theAdminKeyFileIsWrittenTheOwnersAloneFromItsFirstByte() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let leftover = dir.path + "/admin.key.new"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data("half a key".utf8),
                                               attributes: [.posixPermissions: 0o644]))
        let server = try ServerHarness(dataDirectory: dir.path) { $0.adminKey = nil }
        try server.stop()

        let path = dir.path + "/admin.key"
        #expect(try mode(path) == 0o600)
        let key = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.count == 64 && key.allSatisfy(\.isHexDigit), "a whole key: \(key)")
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }
}
