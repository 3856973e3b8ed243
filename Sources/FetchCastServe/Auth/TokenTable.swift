import FetchCastTrace
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bearer tokens of `--tokens FILE`: one `NAME SCOPE SHA256-HEX` a line, the SHA-256 of the
/// token in 64 hex digits (`printf %s "$TOKEN" | sha256sum`); blank lines and `#` comments are
/// skipped, LF or CRLF line ends, each digest once. Only digests are kept, never tokens.
public struct TokenTable: Sendable {
    struct Entry: Sendable {
        var identity: TokenIdentity
        var digest: [UInt8]  // 64 lowercase hex digits
    }

    let entries: [Entry]

    /// Parses a tokens file's text.
    /// - Throws: ``TokenFileError`` naming the line at fault.
    public init(parsing text: String, file: String) throws(TokenFileError) {
        var entries: [Entry] = []
        var lineOfDigest: [[UInt8]: Int] = [:]
        // CRLF line ends are line ends ("\r\n" is one Character, not a "\n").
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if fields.isEmpty { continue }
            guard fields.count == 3 else {
                throw TokenFileError(file: file, line: index + 1, message: "expected NAME SCOPE SHA256-HEX, found \(fields.count) fields")
            }
            guard let scope = Scope(rawValue: String(fields[1])) else {
                throw TokenFileError(file: file, line: index + 1, message: "unknown scope '\(fields[1])' (expected read, ingest or admin)")
            }
            let hex = fields[2].lowercased()
            guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw TokenFileError(file: file, line: index + 1, message: "the digest is not 64 hex digits (make it with: printf %s \"$TOKEN\" | sha256sum)")
            }
            let digest = Array(hex.utf8)
            if let first = lineOfDigest[digest] {
                throw TokenFileError(file: file, line: index + 1, message: "the digest is the same as line \(first)'s: one token would have two names and scopes (give each token its own line)")
            }
            lineOfDigest[digest] = index + 1
            entries.append(Entry(identity: TokenIdentity(name: String(fields[0]), scope: scope), digest: digest))
        }
        guard !entries.isEmpty else {
            throw TokenFileError(file: file, line: 0, message: "the file lists no token")
        }
        self.entries = entries
    }

    /// Reads a tokens file, refusing one that others may write (as ssh refuses such an
    /// `authorized_keys`): whoever can write it can give themselves a token.
    /// - Throws: ``TokenFileError`` when it cannot be read, is group- or world-writable, or a
    ///   line is wrong.
    public init(contentsOf path: String) throws(TokenFileError) {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o022 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw TokenFileError(file: path, line: 0, message: "the tokens file is writable by its group or by everyone (mode \(mode)); make it writable by its owner only: chmod go-w \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TokenFileError(file: path, line: 0, message: "cannot read the tokens file (check the path and permissions)")
        }
        try self.init(parsing: String(decoding: data, as: UTF8.self), file: path)
    }

    /// The identity of a presented token, or `nil`.
    ///
    /// The token is hashed and its digest compared with every entry's in constant time (no
    /// early exit on the first differing byte, nor on the first match), so response times say
    /// nothing about how close a guess was.
    package func identity(of token: String) -> TokenIdentity? {
        let digest = Array(SHA256.hex(of: Array(token.utf8)).utf8)
        var found: TokenIdentity?
        for entry in entries {
            var difference: UInt8 = 0
            for i in 0..<64 { difference |= digest[i] ^ entry.digest[i] }
            if difference == 0 { found = entry.identity }
        }
        return found
    }
}
