import FetchCastTrace
import Foundation
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request body written to a temporary file, so that the ingest reads it the way
/// `fetchcast ingest` reads a file (hash first, then one transaction). Removed by ``remove()``.
///
/// Spools are named after the store they go to (`STORE-body-XXXXXX`, beside it): a server
/// killed during a `POST` leaves its spool, and the next server on that store removes it at
/// start (``removeStale(directory:store:)``).
final class BodySpool: Sendable {
    // Written by one task at a time: the handler awaits each write before the next.
    let path: String
    /// The file's descriptor; -1 once ``remove()`` closed it.
    private let fd: Atomic<Int32>

    /// The name prefix of the spools of the store `store` (its file name).
    static func prefix(store: String) -> String {
        String(store.split(separator: "/").last ?? "fetchcast") + "-body-"
    }

    /// Creates an empty file in `directory`, named after the store file `store`.
    init(directory: String, store: String) throws {
        do {
            let made = try TemporaryPath.makeFile(in: directory, prefix: Self.prefix(store: store))
            fd = Atomic(made.fd)
            path = made.path
        } catch {
            throw Self.failure(error.code, "cannot create a temporary file in \(directory) for the request body")
        }
    }

    /// Removes the spools of `store` left in `directory` by a server that was killed (the
    /// store has one server at a time); returns how many.
    @discardableResult
    static func removeStale(directory: String, store: String) -> Int {
        let prefix = Self.prefix(store: store)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) && name.utf8.count == prefix.utf8.count + 6 {
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// A full disk (`ENOSPC`, `EDQUOT`) is a `507`; anything else a `500`.
    static func failure(_ code: Int32, _ message: String) -> APIError {
        if code == ENOSPC || code == EDQUOT {
            return APIError(.insufficientStorage,
                            "\(message): the server's disk is full (\(String(cString: strerror(code)))); try again later")
        }
        return APIError(.internalServerError, "\(message): \(String(cString: strerror(code)))")
    }

    /// Appends bytes.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            // Retries an interrupted write and writes on after a short one.
            _ = try FileDescriptor(rawValue: fd.load(ordering: .acquiring)).writeAll(bytes)
        } catch {
            throw Self.failure((error as? Errno)?.rawValue ?? EIO, "cannot write the request body to a temporary file")
        }
    }

    /// Closes and deletes the file.
    func remove() {
        let fd = fd.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { close(fd) }
        unlink(path)
    }

    deinit { remove() }
}
