@testable import FetchCastServe
import FetchCastTrace
import Foundation
import Testing

struct TokenTableTests {
    @Test func recognisesEachTokenWithItsScope() throws {
        let table = try TokenTable(parsing: ServeFixture.tokensText, file: "tokens")
        #expect(table.identity(of: ServeFixture.readToken) == TokenIdentity(name: "reader", scope: .read))
        #expect(table.identity(of: ServeFixture.ingestToken) == TokenIdentity(name: "writer", scope: .ingest))
        #expect(table.identity(of: ServeFixture.adminToken) == TokenIdentity(name: "root", scope: .admin))
        #expect(table.identity(of: "wrong") == nil)
        #expect(table.identity(of: "") == nil)
    }

    @Test func scopesImplyOnlyWhatTheySay() {
        #expect(Scope.admin.allows(.read) && Scope.admin.allows(.ingest))
        #expect(Scope.read.allows(.read) && !Scope.read.allows(.ingest))
        #expect(Scope.ingest.allows(.ingest) && !Scope.ingest.allows(.read))
    }

    @Test(arguments: [
        ("reader read", 1, "found 2 fields"),
        ("reader write \(String(repeating: "a", count: 64))", 1, "unknown scope"),
        ("# comment\n\nreader read abc", 3, "64 hex digits"),
        ("# nothing", 0, "no token"),
    ])
    func refusesBadLines(text: String, line: Int, message: String) {
        do {
            _ = try TokenTable(parsing: text, file: "tokens")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.line == line)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func crlfLineEndsAreLineEnds() throws {
        let table = try TokenTable(parsing: ServeFixture.tokensText.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n", file: "tokens")
        #expect(table.identity(of: ServeFixture.readToken) == TokenIdentity(name: "reader", scope: .read))
        #expect(table.identity(of: ServeFixture.adminToken) == TokenIdentity(name: "root", scope: .admin))
    }

    @Test func aDigestTwiceIsRefusedNamingBothLines() {
        let digest = SHA256.hex(of: Array("t".utf8))
        do {
            _ = try TokenTable(parsing: "a read \(digest)\n# x\nb admin \(digest.uppercased())\n", file: "tokens")
            Issue.record("accepted a digest twice")
        } catch {
            #expect(error.line == 3)
            #expect(error.message.contains("line 1"), "\(error.message)")
        }
    }

    @Test(arguments: [0o664, 0o646, 0o622])
    func aFileOthersMayWriteIsRefused(mode: Int) throws {
        let fixture = try ServeFixture()
        let path = fixture.directory + "/tokens"
        try ServeFixture.tokensText.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try TokenTable(contentsOf: path).entries.count == 3)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        do {
            _ = try TokenTable(contentsOf: path)
            Issue.record("accepted mode \(String(mode, radix: 8))")
        } catch {
            #expect(error.message.contains("chmod go-w"), "\(error.message)")
        }
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.1.2.3", true), ("::1", true), ("[::1]", true),
        ("127.evil.example", false), ("localhost", false), ("0.0.0.0", false), ("128.0.0.1", false), ("::", false),
        ("127.0.0.1.nip.io", false), ("", false),
    ])
    func onlyNumericLoopbackAddressesAreLoopback(host: String, loopback: Bool) {
        #expect(ServeConfiguration.isLoopback(host) == loopback)
    }
}
