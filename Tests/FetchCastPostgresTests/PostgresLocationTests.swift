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

    /// A password in every place and shape a URL may carry one, with unencoded '?', '/', '@',
    /// '#' or '&' in it: no part of it ("S3c…PW") is in the parsed location's description, in
    /// the error of a URL that does not parse, nor in ``PostgresLocation/redacted(_:)``.
    @Test(arguments: [
        ("postgres://u@h:1/db?password=S3cretPW", "S3cretPW"),
        ("postgres://u:S3cretPW@h:1/db", "S3cretPW"),
        ("postgres://u:S3c?retPW@h:1/db", "S3c?retPW"),
        ("postgres://u:S3c/retPW@h:1/db", "S3c/retPW"),
        ("postgres://u:S3c@retPW@h:1/db", "S3c@retPW"),
        ("postgres://u:S3c#retPW@h:1/db", "S3c#retPW"),
        ("postgres://u:S3c?re/t@PW@h:1/db?sslmode=require", "S3c?re/t@PW"),
        ("postgres://u@h/db?sslmode=require&password=S3c%26retPW", "S3c&retPW"),
        ("postgres://u@h:1/db?password=S3c/re@tPW", "S3c/re@tPW"),
        // Not parsed: a bad port, no database, a bad parameter before or after the password.
        ("postgres://u:S3cretPW@h:99999/db", nil),
        ("postgres://u:S3c/retPW@h", nil),
        ("postgres://u:S3c?retPW@h", nil),
        ("postgres://u:S3cretPW@h/db?application_name=x", nil),
        ("postgres://u@h/db?password=S3c&retPW", nil),
        ("postgres://u@h/db?password=S3c&sslmode=retPW", nil),
        ("postgres://u@h/db?sslmode=bogus&password=S3cretPW", nil),
        ("POSTGRES://u@h:1/db?PASSWORD=S3cretPW", nil),
        ("postgresql:u:S3cretPW@h/db", nil),
        ("postgres:/u:S3cretPW@h/db", nil),
    ] as [(String, String?)])
    func noPartOfAPasswordIsEverShown(url: String, password: String?) {
        let hides = { (text: String) in !text.contains("S3c") && !text.contains("PW") }
        #expect(PostgresLocation.isURL(url))
        #expect(hides(PostgresLocation.redacted(url)), "\(PostgresLocation.redacted(url))")
        do {
            let location = try PostgresLocation(url: url, environment: [:])
            #expect(password != nil, "\(url) parsed")
            #expect(location.password == password)
            #expect(location.host == "h" && location.user == "u" && location.database == "db")
            #expect(hides(location.description), "\(location.description)")
        } catch {
            #expect(password == nil, "\(url): \(error)")
            #expect(hides(error.description), "\(error.description)")
        }
    }

    @Test func redactedHidesThePassword() {
        #expect(PostgresLocation.redacted("postgres://ann:secret@host:1/db") == "postgres://ann:***@host:1/db")
        #expect(PostgresLocation.redacted("postgres://ann@host:1/db") == "postgres://ann@host:1/db")
        #expect(PostgresLocation.redacted("postgres://ann@host:1/db?sslmode=require&password=x&a=b") == "postgres://ann@host:1/db?sslmode=require&password=***")
        #expect(PostgresLocation.redacted("postgres://ann:p/w@host:1/db?password=x") == "postgres://ann:***@host:1/db?password=***")
    }
}

#if canImport(Glibc)
import Glibc
#endif
