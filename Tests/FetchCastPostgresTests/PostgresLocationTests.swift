import FetchCastPostgres
import FetchCastStore
import FetchCastTestSupport
import Testing

struct PostgresLocationTests {
    @Test func partsOfAURL() throws {
        let l = try PostgresLocation(url: "postgres://ann:s%3Acret@db.example:6543/fleet?sslmode=require", environment: [:])
        #expect(l.user == "ann")
        #expect(l.password == "s:cret")
        #expect(l.host == "db.example")
        #expect(l.port == 6543)
        #expect(l.database == "fleet")
        #expect(l.tls == .require)
        #expect(l.description == "postgres://ann@db.example:6543/fleet?sslmode=require")
        #expect(!l.description.contains("cret"))
    }

    @Test func passwordFromTheEnvironmentWhenTheURLHasNone() throws {
        let l = try PostgresLocation(url: "postgresql://ann@localhost/fleet", environment: ["PGPASSWORD": "pw"])
        #expect(l.password == "pw")
        #expect(l.port == 5432)
        #expect(l.tls == .disable)
        let fromURL = try PostgresLocation(url: "postgres://ann:url@localhost/fleet", environment: ["PGPASSWORD": "env"])
        #expect(fromURL.password == "url")
    }

    @Test func passwordFromPgpass() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("pgpass", "# comment\nother:*:*:*:no\nlocalhost:5432:fleet:ann:pa\\:ss\n*:*:*:*:fallback\n")
        chmod(file, 0o600)
        let l = try PostgresLocation(url: "postgres://ann@localhost:5432/fleet", environment: ["PGPASSFILE": file])
        #expect(l.password == "pa:ss")
        let other = try PostgresLocation(url: "postgres://bo@elsewhere:5432/x", environment: ["PGPASSFILE": file])
        #expect(other.password == "fallback")
        // A file others can read is ignored, as libpq does.
        chmod(file, 0o644)
        #expect(try PostgresLocation(url: "postgres://ann@localhost:5432/fleet", environment: ["PGPASSFILE": file]).password == nil)
    }

    @Test(arguments: [
        ("postgres://ann@host", "names no database"),
        ("postgres://ann@host:99999/db", "port"),
        ("postgres://ann@host/db?sslmode=verify-ca", "sslmode=verify-ca is not supported"),
        ("postgres://ann:secret@host/db?application_name=x", "not supported"),
    ])
    func badURLsAreRefusedWithoutTheirPassword(url: String, message: String) {
        #expect {
            _ = try PostgresLocation(url: url, environment: [:])
        } throws: { error in
            let text = String(describing: error)
            return text.contains(message) && !text.contains("secret")
        }
    }

    @Test func redactedHidesThePassword() {
        #expect(PostgresLocation.redacted("postgres://ann:secret@host:1/db") == "postgres://ann:***@host:1/db")
        #expect(PostgresLocation.redacted("postgres://ann@host:1/db") == "postgres://ann@host:1/db")
    }
}

#if canImport(Glibc)
import Glibc
#endif
