@testable import Server
import Testing

/// Fingerprints written by earlier versions sit in the log as hex text: the first 128 bits of
/// SHA-256 over the canonical request. The values here are from `sha256sum`, so a change to how
/// the digest is made cannot pass by agreeing with itself; retries across an upgrade depend on it.
@Suite struct FingerprintTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb924"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223"),
        (#"{"op":"unlock_reward","reward":"r1"}"#, "07bcfcd03de85f41295536b74dadf602"),
    ])
    func theDigestIsTheFirstHalfOfSHA256(text: String, expected: String) {
        let fingerprint = Fingerprint(digestOf: text)
        #expect(fingerprint.hex == expected)
        // Read back from the log's text, it is the same value.
        #expect(Fingerprint(expected) == fingerprint)
    }

    @Test func textThatIsNotHexGetsItsOwnDigest() {
        #expect(Fingerprint("not hex") == Fingerprint(digestOf: "not hex"))
        #expect(Fingerprint("not hex") != Fingerprint("not hex either"))
    }
}
