import FetchCastStore
import PostgresNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a PostgreSQL event log is: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…][&password=…]`
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
        /// TLS, the certificate checked against the system's roots (or `sslrootcert`), not
        /// the host name (`sslmode=verify-ca`).
        case verifyCA = "verify-ca"
        /// TLS, the certificate checked against the system's roots (or `sslrootcert`) and the
        /// host name (`sslmode=verify-full`).
        case verifyFull = "verify-full"
    }

    public var user: String
    public var host: String
    public var port: Int
    public var database: String
    public var tls: TLSMode
    /// The password, when one was found; never part of ``description``.
    public var password: String?
    /// The CA certificates (PEM file) that `verify-ca` and `verify-full` trust instead of the
    /// system's (`sslrootcert`, else `PGSSLROOTCERT`).
    public var sslRootCert: String?
    /// What the server shows in `pg_stat_activity` (`application_name`, `fetchcast` by default).
    public var applicationName: String = "fetchcast"

    /// The directory of the server's Unix-domain socket, when ``host`` is one (it starts with `/`).
    public var socketDirectory: String? { host.hasPrefix("/") ? host : nil }

    /// The URL without the password.
    public var description: String {
        var parameters: [String] = []
        var s: String
        if socketDirectory != nil {
            s = "postgres://\(user)@:\(port)/\(database)"
            parameters.append("host=\(host)")
        } else {
            s = "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
        }
        if tls != .disable { parameters.append("sslmode=\(tls.rawValue)") }
        if let sslRootCert { parameters.append("sslrootcert=\(sslRootCert)") }
        if applicationName != "fetchcast" { parameters.append("application_name=\(applicationName)") }
        if !parameters.isEmpty { s += "?" + parameters.joined(separator: "&") }
        return s
    }

    /// The TLS settings ``tls`` asks for; `nil` for none (`disable`, or a Unix-domain socket).
    /// `verify-ca` and `verify-full` trust ``sslRootCert`` when it is set, else the system's roots.
    public var tlsConfiguration: TLSConfiguration? {
        guard tls != .disable, socketDirectory == nil else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tls {
        case .disable: return nil
        case .require: configuration.certificateVerification = .none
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if tls != .require, let sslRootCert { configuration.trustRoots = .file(sslRootCert) }
        return configuration
    }

    /// Whether `text` names a PostgreSQL database rather than an SQLite file.
    /// Anything starting `postgres:` or `postgresql:` is taken for one (and refused when it is
    /// not a whole URL), so that a mistyped URL is never opened, nor named, as a file.
    public static func isURL(_ text: String) -> Bool {
        let lower = text.prefix(11).lowercased()
        return lower.hasPrefix("postgres:") || lower.hasPrefix("postgresql:")
    }

    /// Parses a URL.
    /// - Parameters:
    ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…&sslrootcert=…&host=…&application_name=…]`.
    ///   - environment: Where libpq's variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
    ///     `PGPASSWORD`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGPASSFILE`) and `HOME` are read (the
    ///     process's by default); they fill what the URL leaves out.
    /// - Throws: `StoreError` naming what is wrong with the URL (never its password).
    public init(url: String, environment: [String: String] = PostgresLocation.processEnvironment()) throws(StoreError) {
        guard let scheme = url.range(of: "://"), Self.isURL(url) else {
            throw StoreError(path: "--db", message: "not a postgres:// URL; write postgres://USER@HOST:PORT/DATABASE")
        }
        let body = url[scheme.upperBound...]
        // The user information, when there is one: a password may hold unencoded '/', '?', '#'
        // or '@', so it ends at the last '@' whose user has none of them and which a path follows.
        var userInfo = Substring("")
        var rest = body
        if let at = Self.userInfoEnd(body) {
            userInfo = body[..<at]
            rest = body[body.index(after: at)...]
        }
        var query = Substring("")
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        guard let slash = rest.firstIndex(of: "/") else {
            throw StoreError(path: Self.redacted(url), message: "the URL names no database; write postgres://USER@HOST:PORT/DATABASE")
        }
        let hostPort = rest[..<slash]
        var database = Self.percentDecoded(rest[rest.index(after: slash)...])
        if database.isEmpty { database = environment["PGDATABASE"] ?? "" }
        var user = userInfo
        var password: String?
        if let colon = userInfo.firstIndex(of: ":") {
            user = userInfo[..<colon]
            let given = Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
            // An empty password is none, as libpq has it: PGPASSWORD or ~/.pgpass give it.
            if !given.isEmpty { password = given }
        }
        var host = hostPort
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            // An IPv6 address: `[::1]` or `[::1]:5432`.
            let close = hostPort.firstIndex(of: "]")
            host = hostPort[hostPort.index(after: hostPort.startIndex)..<(close ?? hostPort.endIndex)]
            let after = close.map { hostPort[hostPort.index(after: $0)...] } ?? ""
            if close == nil || !after.isEmpty {
                guard close != nil, after.hasPrefix(":") else {
                    throw StoreError(path: Self.redacted(url), message: "the host is not HOST, HOST:PORT, [IPV6] or [IPV6]:PORT")
                }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            portText = hostPort[hostPort.index(after: colon)...]
            host = hostPort[..<colon]
        }
        let port: Int
        if let text = portText ?? environment["PGPORT"].map({ Substring($0) }) {
            guard let p = Int(text), (1...65535).contains(p) else {
                let origin = portText == nil ? "PGPORT" : "the port"
                throw StoreError(path: Self.redacted(url), message: "\(origin) is not a number from 1 to 65535")
            }
            port = p
        } else {
            port = 5432
        }
        self.user = user.isEmpty ? (environment["PGUSER"] ?? environment["USER"] ?? "postgres") : Self.percentDecoded(user)
        var hostName = host.isEmpty ? (environment["PGHOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1") : Self.percentDecoded(host)
        self.port = port
        guard !database.isEmpty else {
            throw StoreError(path: Self.redacted(url), message: "the URL names no database; write postgres://USER@HOST:PORT/DATABASE (or set PGDATABASE)")
        }
        self.database = database
        var tls: TLSMode?
        var sslRootCert: String?
        var applicationName: String?
        // After a password parameter, no key or value is named: an unencoded '&' in the password
        // would make the rest of it one.
        var afterPassword = false
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            let key = kv.first.map(String.init) ?? ""
            let value = kv.count > 1 ? Self.percentDecoded(kv[1]) : ""
            // Only sslmode (checked against its few names) may follow a password: any other value
            // there may be the rest of a password with an unencoded '&', and would be shown.
            switch afterPassword && key != "sslmode" && key != "password" ? "" : key {
            case "sslmode":
                guard let mode = Self.tlsMode(value) else {
                    let named = afterPassword ? "this sslmode" : "sslmode=\(value)"
                    throw StoreError(path: Self.redacted(url), message: "\(named) is not supported; use disable, require, verify-ca or verify-full")
                }
                tls = mode
            case "sslrootcert":
                if !value.isEmpty { sslRootCert = value }
            case "application_name":
                applicationName = value
            case "host":
                if !value.isEmpty { hostName = value }
            case "password":
                // libpq's parameter; as visible in `ps` as a password in the user information.
                password = value
                afterPassword = true
            default:
                let named = afterPassword ? "a URL parameter after password= is" : "the URL parameter '\(key)' is"
                throw StoreError(
                    path: Self.redacted(url),
                    message: "\(named) not supported (only sslmode, sslrootcert, host, application_name and password, which comes last; write '&' in a password as %26)")
            }
        }
        self.host = hostName
        if tls == nil, let mode = environment["PGSSLMODE"], !mode.isEmpty {
            guard let parsed = Self.tlsMode(mode) else {
                throw StoreError(path: Self.redacted(url), message: "PGSSLMODE=\(mode) is not supported; use disable, require, verify-ca or verify-full")
            }
            tls = parsed
        }
        self.tls = tls ?? .disable
        self.sslRootCert = sslRootCert ?? environment["PGSSLROOTCERT"].flatMap { $0.isEmpty ? nil : $0 }
        if let applicationName { self.applicationName = applicationName }
        self.password = password ?? environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
            ?? Self.pgpassPassword(host: hostName.hasPrefix("/") ? "localhost" : hostName, port: port, database: database, user: self.user, environment: environment)
    }

    private static func tlsMode(_ name: String) -> TLSMode? {
        switch name {
        case "disable", "allow", "prefer": return .disable
        case "require": return .require
        case "verify-ca": return .verifyCA
        case "verify-full": return .verifyFull
        default: return nil
        }
    }

    /// Where the user information of a URL's `body` (what follows `://`) ends: the last '@'
    /// whose user (before the first ':') has no '/', '?', '#' or '@' and which a '/' follows;
    /// `nil` when there is none.
    private static func userInfoEnd(_ body: Substring) -> Substring.Index? {
        var end = body.endIndex
        while let at = body[..<end].lastIndex(of: "@") {
            let info = body[..<at]
            let user = info[..<(info.firstIndex(of: ":") ?? info.endIndex)]
            if !user.contains(where: { "/?#@".contains($0) }) && body[body.index(after: at)...].contains("/") { return at }
            end = at
        }
        return nil
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

    /// `url` with anything that may be a password replaced by `***`, for messages about a URL
    /// that did not parse: from the first ':' after the scheme to the last '@' (the user
    /// information's password, even with unencoded '/', '?', '#' or '@' in it), and everything
    /// after a `password=` parameter. It hides more than the password rather than any of it.
    public static func redacted(_ url: String) -> String {
        let start: String.Index
        if let scheme = url.range(of: "://") {
            start = scheme.upperBound
        } else if let colon = url.firstIndex(of: ":") {
            start = url.index(after: colon)
        } else {
            return url
        }
        var hidden: [Range<String.Index>] = []
        if let at = url[start...].lastIndex(of: "@"), let colon = url[start..<at].firstIndex(of: ":") {
            hidden.append(url.index(after: colon)..<at)
        }
        if let key = url[start...].range(of: "password=", options: .caseInsensitive) {
            hidden.append(key.upperBound..<url.endIndex)
        }
        guard !hidden.isEmpty else { return url }
        hidden.sort { $0.lowerBound < $1.lowerBound }
        var out = ""
        var at = url.startIndex
        for range in hidden {
            if range.lowerBound >= at {
                out += url[at..<range.lowerBound] + "***"
                at = range.upperBound
            } else if range.upperBound > at {
                at = range.upperBound  // overlaps the range before: hidden with it
            }
        }
        return out + url[at...]
    }

    /// The password `~/.pgpass` (or `$PGPASSFILE`) gives for this connection: the first line
    /// `host:port:database:user:password` whose fields match, `*` matching anything, `\:` and
    /// `\\` escaped. Like libpq, a file that others can read is ignored, with a warning
    /// (`warn`, standard error by default) in libpq's words.
    package static func pgpassPassword(
        host: String, port: Int, database: String, user: String, environment: [String: String],
        warn: (String) -> Void = { line in _ = (line + "\n").withCString { write(2, $0, strlen($0)) } }
    ) -> String? {
        guard let path = environment["PGPASSFILE"] ?? environment["HOME"].map({ $0 + "/.pgpass" }) else { return nil }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        guard st.st_mode & 0o077 == 0 else {
            warn("WARNING: password file \"\(path)\" has group or world access; permissions should be u=rw (0600) or less")
            return nil
        }
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
