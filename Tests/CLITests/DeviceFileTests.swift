import Foundation
import Testing

/// The file where `bq play` keeps its device id and token.
@Suite struct DeviceFileTests {
    @Test func aFileThatIsNotADeviceFileIsRefusedAndLeftAsItWas() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let notes = try makeTemporaryDirectory().appendingPathComponent("notes.txt")
        try Data("shopping: candles, cake\n".utf8).write(to: notes)
        let result = try BQProcess.run(["play"] + server.address + ["--device-file", notes.path, "--character", "theo", "whoami"])
        #expect(result.status == 2)
        #expect(result.err.contains("is not a bq device file"), "\(result.err)")
        #expect(try String(contentsOf: notes, encoding: .utf8) == "shopping: candles, cake\n")
        let under = try BQProcess.run(["play"] + server.address + ["--device-file", notes.path + "/theo.json", "--character", "theo", "whoami"])
        #expect(under.status == 2)
        #expect(under.err.contains("cannot be made (is part of that path a file?)"), "\(under.err)")

        // Nothing was claimed with it: theo is still free for the device that asks first.
        let theo = try BQProcess.run(["play"] + server.address + ["--character", "theo", "whoami"],
                                     home: try makeTemporaryDirectory())
        #expect(theo.status == 0, "\(theo.err)")
        #expect(theo.out.contains("You are now Theo"))
    }

    @Test func theSavedFileIsPrivateLeavesNothingBesideItAndResumesTheSession() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let file = try makeTemporaryDirectory().appendingPathComponent("nested/dir/theo.json")
        let first = try BQProcess.run(["play"] + server.address + ["--device-file", file.path, "--character", "theo", "whoami"])
        #expect(first.status == 0, "\(first.err)")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let directory = file.deletingLastPathComponent().path
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["theo.json"], "no temporary left beside it")
        // One left by a bq play killed while saving (no process has this id: pids stay below
        // 2^22 on Linux) goes with the next save.
        let stale = file.path + ".new-2147483646"
        try Data(#"{"device":"dev-x","token":"t"}"#.utf8).write(to: URL(fileURLWithPath: stale))
        let again = try BQProcess.run(["play"] + server.address + ["--device-file", file.path, "--character", "dani", "whoami"])
        #expect(again.status == 0, "\(again.err)")
        #expect(!FileManager.default.fileExists(atPath: stale), "the stale temporary went with this save")
        let resumed = try BQProcess.run(["play"] + server.address + ["--device-file", file.path, "whoami"])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(resumed.out.contains("You are Dani"), "\(resumed.out)")
    }
}
