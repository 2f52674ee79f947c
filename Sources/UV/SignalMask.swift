import Glibc

/// Unblocks signals for the calling thread (and the threads it starts later).
/// A process inherits its parent's signal mask: a server started by a parent
/// that had SIGTERM blocked would otherwise never see it, and libuv's signal
/// watcher would wait forever.
public func unblockSignals(_ signals: [Int32]) {
    // The set lives on this stack frame for the duration of the call only.
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
}
