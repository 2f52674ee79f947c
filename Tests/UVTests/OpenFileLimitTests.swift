import Glibc
import Testing
import UV
import POSIXSupport

/// Only ever raises this test process's limit: lowering it could starve tests running beside.
@Suite struct OpenFileLimitTests {
    private func limits() -> rlimit {
        var limit = rlimit()
        _ = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        return limit
    }

    @Test func theSoftLimitIsRaisedToWhatIsWantedButNotPastTheHardLimit() {
        let before = limits()
        if before.rlim_cur < before.rlim_max {
            let wanted = Int(before.rlim_cur) + 1
            #expect(raiseOpenFileLimit(to: wanted) == wanted)
            #expect(limits().rlim_cur == rlim_t(wanted))
        }
        let hard = limits().rlim_max
        if hard < rlim_t(Int.max / 2) {
            #expect(raiseOpenFileLimit(to: Int(hard) + 1) == Int(hard), "capped by the hard limit")
            #expect(limits().rlim_cur == hard)
        }
        let now = Int(limits().rlim_cur)
        #expect(raiseOpenFileLimit(to: 16) == now, "a limit already high enough is left alone")
        #expect(Int(limits().rlim_cur) == now)
    }
}
