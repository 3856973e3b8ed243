import FetchCastTrace
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory of this process's own for request bodies (``BodySpool``), for a server whose
/// store is not a file beside which to spool (PostgreSQL: several servers on one database may
/// share a machine and its `$TMPDIR`).
///
/// The process holds an exclusive `flock` on a file inside (`owner.lock`) for as long as it
/// runs; the kernel releases it when the process ends, however it ends. So a server starting
/// later tells a directory whose server was killed (its lock free) from one whose server runs,
/// and removes the first with the bodies it held (``removeAbandoned(in:)``). A graceful stop
/// removes its own (``remove()``).
package final class PrivateSpoolDirectory: Sendable {
    /// The directory.
    package let path: String
    /// The lock file's descriptor; -1 once ``remove()`` closed it.
    private let lock: Atomic<Int32>

    /// The name of the directories: the prefix, then 6 characters `mkdtemp` chose.
    static let prefix = "fetchcast-spool-"
    /// The file whose lock says the directory's server runs.
    static let lockName = "owner.lock"

    private init(path: String, lock: Int32) {
        self.path = path
        self.lock = Atomic(lock)
    }

    /// A new directory in `base` only this user can enter, locked by this process.
    package static func create(in base: String) throws -> PrivateSpoolDirectory {
        let path: String
        do {
            path = try TemporaryPath.makeDirectory(in: base, prefix: prefix)
        } catch {
            throw Failure(description: "\(base): cannot create a directory to spool request bodies in (\(error.reason)); set TMPDIR to a writable directory")
        }
        let fd = open(path + "/" + lockName, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let message = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            rmdir(path)
            throw Failure(description: "\(path): cannot lock the spool directory (\(message))")
        }
        return PrivateSpoolDirectory(path: path, lock: fd)
    }

    /// Removes, in `base`, the spool directories of servers that are no longer running (their
    /// lock free) with what they hold; leaves those of running servers, other users' and any
    /// without a lock file (made otherwise: not known to be a server's). Returns how many.
    @discardableResult
    package static func removeAbandoned(in base: String) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) && name.utf8.count == prefix.utf8.count + 6 {
            let path = base + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else { continue }
            let fd = open(path + "/" + lockName, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }  // its server runs
            if empty(path) { removed += 1 }
        }
        return removed
    }

    /// Removes this directory and what it holds (at a graceful stop).
    package func remove() {
        let fd = lock.exchange(-1, ordering: .acquiringAndReleasing)
        guard fd >= 0 else { return }
        _ = Self.empty(path)
        close(fd)
    }

    /// Unlinks the regular files in `path` (bodies and the lock file), then the directory;
    /// whether the directory is gone.
    private static func empty(_ path: String) -> Bool {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            unlink(path + "/" + name)
        }
        return rmdir(path) == 0
    }

    /// Releases the lock and leaves the directory, as a process that ends without its graceful
    /// stop does (the kernel releases its lock): what ``removeAbandoned(in:)`` removes (tests).
    package func abandon() {
        let fd = lock.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { close(fd) }
    }

    /// Released (with the application built with it, ``ServeConfiguration/init(store:)``), it is
    /// removed, as at a graceful stop.
    deinit { remove() }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }
}
