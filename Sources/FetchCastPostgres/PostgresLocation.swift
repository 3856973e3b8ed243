import FetchCastStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a PostgreSQL event log is: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]`
/// (or `postgresql://`), with the password from the URL, else `PGPASSWORD`, else `~/.pgpass`.
///
/// The password is kept apart from everything printed: ``description`` is the URL without it.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is encrypted (libpq's `sslmode` names).
    public enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP (`sslmode=disable`, and the default when the URL names none).
        case disable
        /// TLS, the server's certificate not checked (`sslmode=require`, as libpq does).
        case require
        /// TLS, the certificate checked against the system's roots and the host name
        /// (`sslmode=verify-full`).
        case verifyFull = "verify-full"
    }

    public var user: String
    public var host: String
    public var port: Int
    public var database: String
    public var tls: TLSMode
    /// The password, when one was found; never part of ``description``.
    public var password: String?

    /// The URL without the password.
    public var description: String {
        var s = "postgres://\(user)@\(host):\(port)/\(database)"
        if tls != .disable { s += "?sslmode=\(tls.rawValue)" }
        return s
    }

    /// Whether `text` names a PostgreSQL database rather than an SQLite file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses a URL.
    /// - Parameters:
    ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|require|verify-full]`.
    ///   - environment: Where `PGPASSWORD` and `HOME` are read (the process's by default).
    /// - Throws: `StoreError` naming what is wrong with the URL (never its password).
    public init(url: String, environment: [String: String] = PostgresLocation.processEnvironment()) throws(StoreError) {
        guard let scheme = url.range(of: "://"), Self.isURL(url) else {
            throw StoreError(path: "--db", message: "not a postgres:// URL; write postgres://USER@HOST:PORT/DATABASE")
        }
        var rest = Substring(url[scheme.upperBound...])
        var query = Substring("")
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        guard let slash = rest.firstIndex(of: "/") else {
            throw StoreError(path: Self.redacted(url), message: "the URL names no database; write postgres://USER@HOST:PORT/DATABASE")
        }
        let authority = rest[..<slash]
        let database = Self.percentDecoded(rest[rest.index(after: slash)...])
        var userInfo = Substring("")
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
        }
        var user = userInfo
        var password: String?
        if let colon = userInfo.firstIndex(of: ":") {
            user = userInfo[..<colon]
            password = Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
        }
        var host = hostPort
        var port = 5432
        if let colon = hostPort.lastIndex(of: ":") {
            guard let p = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(p) else {
                throw StoreError(path: Self.redacted(url), message: "the port is not a number from 1 to 65535")
            }
            port = p
            host = hostPort[..<colon]
        }
        self.user = user.isEmpty ? (environment["PGUSER"] ?? environment["USER"] ?? "postgres") : Self.percentDecoded(user)
        self.host = host.isEmpty ? "127.0.0.1" : String(host)
        self.port = port
        guard !database.isEmpty else {
            throw StoreError(path: Self.redacted(url), message: "the URL names no database; write postgres://USER@HOST:PORT/DATABASE")
        }
        self.database = database
        tls = .disable
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            let key = kv.first.map(String.init) ?? ""
            let value = kv.count > 1 ? Self.percentDecoded(kv[1]) : ""
            switch key {
            case "sslmode":
                switch value {
                case "disable", "allow", "prefer": tls = .disable
                case "require": tls = .require
                case "verify-full": tls = .verifyFull
                default:
                    throw StoreError(path: Self.redacted(url), message: "sslmode=\(value) is not supported; use disable, require or verify-full")
                }
            default:
                throw StoreError(path: Self.redacted(url), message: "the URL parameter '\(key)' is not supported (only sslmode)")
            }
        }
        self.password = password ?? environment["PGPASSWORD"]
            ?? Self.pgpassPassword(host: self.host, port: port, database: database, user: self.user, environment: environment)
    }

    /// The process's environment.
    public static func processEnvironment() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { out[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return out
    }

    /// `url` with any password replaced by `***`, for messages about a URL that did not parse.
    public static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// The password `~/.pgpass` (or `$PGPASSFILE`) gives for this connection: the first line
    /// `host:port:database:user:password` whose fields match, `*` matching anything, `\:` and
    /// `\\` escaped. Like libpq, a file that others can read is ignored.
    static func pgpassPassword(host: String, port: Int, database: String, user: String, environment: [String: String]) -> String? {
        guard let path = environment["PGPASSFILE"] ?? environment["HOME"].map({ $0 + "/.pgpass" }) else { return nil }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_mode & 0o077 == 0 else { return nil }
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n <= 0 { break }
            text += chunk[0..<n]
        }
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("#") { continue }
            let fields = splitPgpass(line)
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    private static func splitPgpass(_ line: Substring) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for c in line {
            if escaped {
                current.append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == ":" && fields.count < 4 {
                fields.append(current)
                current = ""
            } else {
                current.append(c)
            }
        }
        fields.append(current)
        return fields
    }

    private static func percentDecoded(_ s: Substring) -> String {
        var bytes: [UInt8] = []
        var i = s.utf8.startIndex
        let u = s.utf8
        while i < u.endIndex {
            let b = u[i]
            if b == UInt8(ascii: "%"), let j = u.index(i, offsetBy: 2, limitedBy: u.endIndex), j < u.endIndex,
               let v = UInt8(String(decoding: u[u.index(after: i)...j], as: UTF8.self), radix: 16) {
                bytes.append(v)
                i = u.index(after: j)
            } else {
                bytes.append(b)
                i = u.index(after: i)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
