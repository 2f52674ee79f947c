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
}
