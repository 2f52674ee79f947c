import Glibc

/// Unblocks signals for the calling thread (and the threads it starts later).
/// A process inherits its parent's signal mask: a server started by a parent
/// that had SIGTERM blocked would otherwise never see it, and libuv's signal
/// watcher would wait forever.
public func unblockSignals(_ signals: [Int32]) {
    changeSignalMask(SIG_UNBLOCK, signals)
}

/// Blocks signals for the calling thread (and the threads it starts later): one that arrives
/// meanwhile waits, pending, until `unblockSignals`, when its handler (a libuv watcher by then)
/// gets it. A server's start-up does this so that SIGTERM while it loads is a clean stop, not a
/// death by the signal's default action. The mask is per thread: called while the process has
/// one thread (as `bq serve` does, before it starts the server), it holds for the whole process.
public func blockSignals(_ signals: [Int32]) {
    changeSignalMask(SIG_BLOCK, signals)
}

private func changeSignalMask(_ how: Int32, _ signals: [Int32]) {
    // The set lives on this stack frame for the duration of the call only.
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    pthread_sigmask(how, &set, nil)
}

/// Makes writes to a peer that has gone away fail with `EPIPE` instead of killing the process.
public func ignoreSIGPIPE() {
    ignoreSignal(SIGPIPE)
}

/// Has the process ignore `number` from now on.
public func ignoreSignal(_ number: Int32) {
    signal(number, SIG_IGN)
}

/// Whether the process ignores `number`, as one started under `nohup` ignores SIGHUP.
public func signalIsIgnored(_ number: Int32) -> Bool {
    // Queried, not changed: the struct lives on this frame for the call only.
    var current = sigaction()
    guard sigaction(number, nil, &current) == 0 else { return false }
    return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
}
