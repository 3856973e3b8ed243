import Foundation
import Testing
@testable import FetchCastTrace

/// The one helper that makes temporary files and directories (issue 41: five copies of the
/// `mkstemp` template code before).
struct TemporaryPathTests {
    @Test func makesNewFilesOnlyTheUserCanReadAndNewDirectories() throws {
        let base = try TemporaryPath.makeDirectory(in: TemporaryPath.directory, prefix: "fetchcast-test-")
        defer { try? FileManager.default.removeItem(atPath: base) }
        var attributes = try FileManager.default.attributesOfItem(atPath: base)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let a = try TemporaryPath.makeFile(in: base, prefix: "spool-")
        let b = try TemporaryPath.makeFile(in: base, prefix: "spool-")
        defer { close(a.fd); close(b.fd) }
        #expect(a.path != b.path && a.path.hasPrefix(base + "/spool-") && a.path.utf8.count == (base + "/spool-").utf8.count + 6)
        attributes = try FileManager.default.attributesOfItem(atPath: a.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(fcntl(a.fd, F_GETFD) & FD_CLOEXEC != 0, "not inherited by child processes")
        #expect(write(a.fd, "x", 1) == 1)
    }

    @Test func aDirectoryThatIsNotThereIsTheSystemsError() {
        #expect(throws: TemporaryPath.Failure(code: ENOENT)) { _ = try TemporaryPath.makeFile(in: "/nonexistent-fetchcast", prefix: "x-") }
        #expect(throws: TemporaryPath.Failure(code: ENOENT)) { _ = try TemporaryPath.makeDirectory(in: "/nonexistent-fetchcast", prefix: "x-") }
        #expect(TemporaryPath.Failure(code: ENOENT).reason == "No such file or directory")
    }
}
