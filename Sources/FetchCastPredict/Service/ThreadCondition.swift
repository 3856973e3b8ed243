#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock and a condition to wait on under it (POSIX), for threads that wait for another's
/// work (``PlansInMemory``); `Mutex` has no condition.
final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }

    func unlock() { pthread_mutex_unlock(mutex) }

    /// Releases the lock until woken, then takes it again (callers check their condition again:
    /// a wake-up may be spurious).
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every waiting thread.
    func broadcast() { pthread_cond_broadcast(condition) }
}
