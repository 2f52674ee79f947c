import Crypto
import Foundation
import POSIXSupport
import Protocol

/// Session tokens and the admin key: random, compared by hash, never logged.
enum Secrets {
    /// 256 random bits as hex: far past the 128 bits a guessed token would need.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<4 { bytes += bigEndianBytes(of: generator.next()) }
        return lowercaseHex(bytes)
    }

    /// What the log stores for a token: a leaked database does not sign anyone in.
    static func hash(_ token: String) -> String {
        lowercaseHex(SHA256.hash(data: Data(token.utf8)))
    }

    /// Compares without stopping at the first difference, so timing does not reveal the key.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }

    /// A key file that is there but cannot be read (its mode, its owner), or is empty, when no
    /// key is configured: a new key written over it would lock out every console that signs in
    /// with the old one. Checked before the log is made or opened too, which a refused start
    /// must leave as they were.
    static func refuseUnusableKeyFile(configured: String?, path: String) throws {
        guard configured?.isEmpty ?? true, FileManager.default.fileExists(atPath: path) else { return }
        guard let contents = FileManager.default.contents(atPath: path) else {
            let reason = readabilityError(of: path).map { " (\($0))" } ?? ""
            throw ServerError.startup("Cannot read the admin key file \(path)\(reason): fix its owner and mode, "
                + "or delete it to make a new key")
        }
        guard !String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ServerError.startup("The admin key file \(path) is empty; delete it to make a new key")
        }
    }

    /// The admin key: configured, or made on first launch and kept in the data
    /// directory, readable by its owner only. Returns the key and, when it came
    /// from the file, the file's path (so the server can say where it is).
    static func adminKey(configured: String?, path: String) throws -> (key: String, file: String?) {
        if let configured, !configured.isEmpty { return (configured, nil) }
        let manager = FileManager.default
        try refuseUnusableKeyFile(configured: nil, path: path)
        if let existing = manager.contents(atPath: path) {
            return (String(decoding: existing, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), path)
        }
        let key = newToken()
        try PrivateFile.write(Data((key + "\n").utf8), to: path)
        return (key, path)
    }
}
