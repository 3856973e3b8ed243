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
        ("postgres://ann@host/db?sslmode=verify-everything", "sslmode=verify-everything is not supported"),
        ("postgres://ann:secret@host/db?connect_timeout=x", "not supported"),
        ("postgres://ann@[::1/db", "is not HOST, HOST:PORT, [IPV6] or [IPV6]:PORT"),
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
        ("postgres://u:S3cretPW@h/db?connect_timeout=x", nil),
        ("postgres://u@h/db?password=S3c&retPW", nil),
        ("postgres://u@h/db?password=S3c&sslmode=retPW", nil),
        ("postgres://u@h/db?password=S3c&application_name=retPW", nil),
        ("postgres://u@h/db?password=S3c&host=/retPW", nil),
        ("postgres://u@h/db?password=S3c&sslrootcert=retPW", nil),
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

    // MARK: libpq's conventions (issue 40 item 6)

    /// libpq's variables fill what the URL leaves out; what the URL says wins.
    @Test func environmentFillsWhatTheURLLeavesOut() throws {
        let environment = [
            "PGHOST": "db.example", "PGPORT": "6543", "PGUSER": "ann", "PGDATABASE": "fleet",
            "PGPASSWORD": "pw", "PGSSLMODE": "verify-full", "PGSSLROOTCERT": "/etc/ca.pem",
        ]
        let l = try PostgresLocation(url: "postgres:///", environment: environment)
        #expect(l.host == "db.example" && l.port == 6543 && l.user == "ann" && l.database == "fleet")
        #expect(l.password == "pw" && l.tls == .verifyFull && l.sslRootCert == "/etc/ca.pem")
        let url = try PostgresLocation(
            url: "postgres://bo:secret@other:7000/x?sslmode=require&sslrootcert=/u.pem", environment: environment)
        #expect(url.host == "other" && url.port == 7000 && url.user == "bo" && url.database == "x")
        #expect(url.password == "secret" && url.tls == .require && url.sslRootCert == "/u.pem")
        // A host with no port in the URL takes PGPORT, as libpq does.
        #expect(try PostgresLocation(url: "postgres://bo@other/x", environment: environment).port == 6543)
        #expect(try PostgresLocation(url: "postgres://bo@other/x", environment: [:]).port == 5432)
    }

    @Test func anEmptyURLPasswordFallsBackToPGPASSWORD() throws {
        let l = try PostgresLocation(url: "postgres://ann:@localhost/fleet", environment: ["PGPASSWORD": "pw"])
        #expect(l.password == "pw")
        #expect(try PostgresLocation(url: "postgres://ann:@localhost/fleet", environment: [:]).password == nil)
    }

    @Test(arguments: [
        (["PGPORT": "x"], "PGPORT is not a number"),
        (["PGSSLMODE": "sometimes"], "PGSSLMODE=sometimes is not supported"),
    ] as [([String: String], String)])
    func badEnvironmentIsNamed(environment: [String: String], message: String) {
        #expect {
            _ = try PostgresLocation(url: "postgres://ann@host/db", environment: environment)
        } throws: { error in
            String(describing: error).contains(message)
        }
    }

    /// `verify-ca` and `verify-full` trust `sslrootcert` (a private CA) instead of the
    /// system's roots; `verify-ca` does not check the host name; `require` checks nothing.
    @Test func sslrootcertIsTrusted() throws {
        let full = try PostgresLocation(url: "postgres://ann@h/db?sslmode=verify-full&sslrootcert=/etc/ca.pem", environment: [:])
        #expect(full.description == "postgres://ann@h:5432/db?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        let configuration = try #require(full.tlsConfiguration)
        guard case .file(let path)? = configuration.trustRoots else {
            Issue.record("trust roots: \(String(describing: configuration.trustRoots))")
            return
        }
        #expect(path == "/etc/ca.pem")
        #expect(configuration.certificateVerification == .fullVerification)
        let ca = try #require(try PostgresLocation(url: "postgres://ann@h/db?sslmode=verify-ca", environment: ["PGSSLROOTCERT": "/ca.pem"]).tlsConfiguration)
        #expect(ca.certificateVerification == .noHostnameVerification)
        guard case .file("/ca.pem")? = ca.trustRoots else {
            Issue.record("trust roots: \(String(describing: ca.trustRoots))")
            return
        }
        let system = try #require(try PostgresLocation(url: "postgres://ann@h/db?sslmode=verify-full", environment: [:]).tlsConfiguration)
        guard case .default? = system.trustRoots else {
            Issue.record("trust roots: \(String(describing: system.trustRoots))")
            return
        }
        let require = try #require(try PostgresLocation(url: "postgres://ann@h/db?sslmode=require", environment: [:]).tlsConfiguration)
        #expect(require.certificateVerification == .none)
        #expect(try PostgresLocation(url: "postgres://ann@h/db", environment: [:]).tlsConfiguration == nil)
    }

    @Test func applicationNameIsFetchcastUnlessSet() throws {
        let l = try PostgresLocation(url: "postgres://ann@h/db", environment: [:])
        #expect(l.applicationName == "fetchcast")
        #expect(l.description == "postgres://ann@h:5432/db")
        let named = try PostgresLocation(url: "postgres://ann@h/db?application_name=fleet%20loader", environment: [:])
        #expect(named.applicationName == "fleet loader")
        #expect(named.description == "postgres://ann@h:5432/db?application_name=fleet loader")
    }

    /// A host starting with '/' is the directory of a Unix-domain socket (in the URL's query
    /// or PGHOST), without TLS; `[::1]` is an IPv6 host.
    @Test func socketsAndIPv6Hosts() throws {
        let query = try PostgresLocation(url: "postgres://ann@/fleet?host=/var/run/postgresql&sslmode=require", environment: [:])
        #expect(query.socketDirectory == "/var/run/postgresql" && query.port == 5432 && query.tlsConfiguration == nil)
        #expect(query.description == "postgres://ann@:5432/fleet?host=/var/run/postgresql&sslmode=require")
        let env = try PostgresLocation(url: "postgres://ann@:5433/fleet", environment: ["PGHOST": "/tmp/pg"])
        #expect(env.socketDirectory == "/tmp/pg" && env.port == 5433)
        let roundTrip = try PostgresLocation(url: env.description, environment: [:])
        #expect(roundTrip.socketDirectory == "/tmp/pg" && roundTrip.port == 5433)
        #expect(try PostgresLocation(url: "postgres://ann@h/fleet", environment: [:]).socketDirectory == nil)
        let v6 = try PostgresLocation(url: "postgres://ann@[::1]/fleet", environment: [:])
        #expect(v6.host == "::1" && v6.port == 5432)
        #expect(v6.description == "postgres://ann@[::1]:5432/fleet")
        let v6Port = try PostgresLocation(url: "postgres://ann:pw@[::1]:6000/fleet", environment: [:])
        #expect(v6Port.host == "::1" && v6Port.port == 6000 && v6Port.password == "pw")
    }

    /// A password file others can read is not used, and said so as libpq says it.
    @Test func aPgpassOthersCanReadIsWarnedAbout() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("pgpass", "*:*:*:*:pw\n")
        var warnings: [String] = []
        chmod(file, 0o640)
        let open = PostgresLocation.pgpassPassword(
            host: "h", port: 5432, database: "db", user: "ann", environment: ["PGPASSFILE": file], warn: { warnings.append($0) })
        #expect(open == nil)
        #expect(warnings == ["WARNING: password file \"\(file)\" has group or world access; permissions should be u=rw (0600) or less"])
        chmod(file, 0o600)
        let closed = PostgresLocation.pgpassPassword(
            host: "h", port: 5432, database: "db", user: "ann", environment: ["PGPASSFILE": file], warn: { warnings.append($0) })
        #expect(closed == "pw" && warnings.count == 1)
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
