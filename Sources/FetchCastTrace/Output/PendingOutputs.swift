#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The temporary files of the outputs being written, removed when SIGINT, SIGTERM or SIGHUP
/// ends the process before they are renamed into place (otherwise a hidden
/// `.NAME.fetchcast-XXXXXXXX` would stay beside the target).
///
/// The signal handler may run on any thread at any instant, so it takes no lock and allocates
/// nothing: it reads one immutable snapshot of the pending paths (NUL-terminated strings, an empty
/// one last) through an atomic pointer, unlinks each (`unlink` is async-signal-safe), restores
/// the signal's default action and raises it again, so the process still ends as killed by that
/// signal (a shell sees 130 for Ctrl-C). Registering and removing a path, off the signal path,
/// publish a new snapshot under a mutex; an old snapshot is freed unless a handler may be reading
/// it (then it is left: the process is ending).
///
/// The handlers are installed on the first registration, and only for signals whose action is
/// still the default: a program that handles them itself (the HTTP service stops gracefully on
/// SIGTERM) keeps its own handling.
enum PendingOutputs {
    /// Registers a temporary file to remove if a signal ends the process.
    static func add(_ path: String) {
        registry.withLock { paths in
            paths.append(path)
            publish(paths)
        }
        installHandlers()
    }

    /// Forgets a temporary file (renamed into place or removed).
    static func remove(_ path: String) {
        registry.withLock { paths in
            guard let index = paths.lastIndex(of: path) else { return }
            paths.remove(at: index)
            publish(paths)
        }
    }

    /// The pending paths; the snapshot below is what the handler reads.
    private static let registry = Mutex<[String]>([])
    /// The address of the current snapshot (0: none).
    private static let snapshot = Atomic<UInt>(0)
    /// Set by a handler before it reads the snapshot: old snapshots are then never freed.
    private static let handling = Atomic<Bool>(false)
    private static let installed = Atomic<Bool>(false)

    /// Publishes `paths` as the snapshot the handler reads. Called with the registry locked.
    private static func publish(_ paths: [String]) {
        var bytes: [UInt8] = []
        for path in paths { bytes += path.utf8; bytes.append(0) }
        bytes.append(0)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        buffer.initialize(from: bytes, count: bytes.count)
        let old = snapshot.exchange(UInt(bitPattern: buffer), ordering: .sequentiallyConsistent)
        // A handler that started before the exchange may hold the old snapshot.
        if old != 0 && !handling.load(ordering: .sequentiallyConsistent) {
            UnsafeMutablePointer<UInt8>(bitPattern: old)?.deallocate()
        }
    }

    /// Unlinks every pending path. Async-signal-safe: atomics, `strlen` and `unlink` only.
    fileprivate static func unlinkAll() {
        handling.store(true, ordering: .sequentiallyConsistent)
        guard var cursor = UnsafePointer<CChar>(bitPattern: snapshot.load(ordering: .sequentiallyConsistent)) else {
            return
        }
        while cursor.pointee != 0 {
            unlink(cursor)
            cursor += strlen(cursor) + 1
        }
    }

    private static func installHandlers() {
        guard !installed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0, handlerIsDefault(current) else { continue }
            var action = sigaction()
            #if os(Linux)
            action.__sigaction_handler.sa_handler = removePendingOutputsAndDie
            #else
            action.__sigaction_u.__sa_handler = removePendingOutputsAndDie
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            _ = sigaction(signal, &action, nil)
        }
    }

    private static func handlerIsDefault(_ action: sigaction) -> Bool {
        #if os(Linux)
        let handler = action.__sigaction_handler.sa_handler
        #else
        let handler = action.__sigaction_u.__sa_handler
        #endif
        return handler == nil  // SIG_DFL is the null handler
    }
}

/// The handler for SIGINT, SIGTERM and SIGHUP: removes the pending temporary outputs, then
/// ends the process by the same signal with its default action.
private func removePendingOutputsAndDie(_ signal: Int32) {
    PendingOutputs.unlinkAll()
    var action = sigaction()
    sigemptyset(&action.sa_mask)
    _ = sigaction(signal, &action, nil)  // the default action (a zeroed handler is SIG_DFL)
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, signal)
    _ = pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    raise(signal)
}
