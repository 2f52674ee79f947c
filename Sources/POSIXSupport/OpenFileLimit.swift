import Glibc

/// Raises this process's soft limit on open files to `wanted` (or to the hard limit, if that
/// is lower) and returns the soft limit in force afterwards. Debian starts processes with a
/// soft limit of 1,024 and a much higher hard one: without this, the thousandth connection of
/// a server allowed four thousand fails to be accepted.
public func raiseOpenFileLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
    let target = rlim_t(wanted)
    let infinity = rlim_t.max  // RLIM_INFINITY, which Swift imports as an overflowing -1
    guard limit.rlim_cur != infinity, limit.rlim_cur < target else {
        return limit.rlim_cur == infinity ? Int.max : Int(limit.rlim_cur)
    }
    let raised = limit.rlim_max == infinity ? target : min(target, limit.rlim_max)
    var updated = limit
    updated.rlim_cur = raised
    return setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &updated) == 0 ? Int(raised) : Int(limit.rlim_cur)
}
