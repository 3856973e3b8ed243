@testable import FetchCastServe
import FetchCastTrace
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
}
