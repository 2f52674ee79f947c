import Domain
import Protocol
import Testing

@Suite struct ErrorCodeTests {
    /// A rule the domain refuses with goes on the wire under the same name, never as `internal`.
    @Test(arguments: RejectionCode.allCases)
    func everyRejectionKeepsItsNameOnTheWire(code: RejectionCode) {
        let error = ProtocolError(Rejection(code, "refused"))
        #expect(error.code.rawValue == code.rawValue)
        #expect(error.code != .internal)
    }

    /// Clients try again later only after the refusals that say the server cannot take the request
    /// now; every other code is an answer about the request itself.
    @Test func onlyBusyOrFailingServersAreTransient() {
        let transient = ErrorCode.allCases.filter(\.isTransient)
        #expect(transient == [.rateLimited, .unavailable, .internal])
    }
}
