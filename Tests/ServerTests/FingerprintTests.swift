@testable import Server
import Testing

/// Fingerprints written by earlier versions sit in the log as `Secrets.digest` text; the digest
/// made straight from the bytes must be the same value, or retries across an upgrade would be
/// refused as different requests.
@Suite struct FingerprintTests {
    @Test(arguments: ["", "{}", #"{"op":"unlock_reward","reward":"r1"}"#, "Ünïcode ✓ and more than sixteen bytes of text"])
    func theDirectDigestMatchesTheHexForm(text: String) {
        let direct = Fingerprint(digestOf: text)
        #expect(direct == Fingerprint(Secrets.digest(text)))
        #expect(direct.hex == Secrets.digest(text))
    }
}
