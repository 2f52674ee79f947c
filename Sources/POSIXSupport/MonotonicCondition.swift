import Glibc

/// A lock and a condition variable whose timed waits run on CLOCK_MONOTONIC, which a step of the
/// wall clock does not move. `NSCondition` waits until a wall-clock date: on a machine whose
/// clock is set back (a board with no clock of its own, corrected by hand or by NTP), a wait of
/// five seconds would last an hour longer, and a clock set forward would end it at once.
///
/// Memory: the mutex and the condition variable live in memory this object allocates and frees,
/// and never move (POSIX forbids moving them). Threads: any; it is where threads meet.
public final class MonotonicCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Wakes every thread in `wait`. Call holding the lock.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Releases the lock until woken, then takes it again. Call holding the lock, in a loop
    /// that checks what it waits for (a wake may be spurious).
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Releases the lock until woken or until `deadline` (`monotonicNanoseconds()`), then takes it
    /// again. Call holding the lock. False when it returned because the deadline had passed.
    public func wait(untilMonotonic deadline: UInt64) -> Bool {
        var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &until) != ETIMEDOUT
    }
}
