import FetchCastTestSupport
import Foundation
import Testing

/// Every fenced command of README.md and docs/*.md runs as written, from a copy of the
/// repository's tracked files with nothing beside it (no `.build/`, no store), with the built
/// `fetchcast` first on `PATH`.
///
/// A fence names its language. `sh` blocks run as one `bash -e -o pipefail` script; `console`
/// blocks run each `$ ` command on its own (`bash -o pipefail`; variables do not carry over) and
/// compare its stdout with the lines shown under it (trailing spaces aside). An HTML comment on the line before the fence (invisible on GitHub)
/// classifies a block otherwise, one per line:
///
/// - `<!-- doc-test: skip: REASON -->`: not run (a build, a server, minutes of work); every
///   `fetchcast` command in it must still name a subcommand and flags its `--help` lists, and
///   every script it names must exist and be executable.
/// - `<!-- doc-test: given: COMMAND -->`: runs COMMAND first (what the page assumes was done,
///   such as ingesting the sample).
/// - `<!-- doc-test: output not compared: REASON -->`: a console block whose output holds times
///   or paths of the moment.
///
/// Each document runs in its own fresh copy, blocks in page order, so a block sees what the
/// blocks above it made.
struct DocCommandTests {
    static let repository = CLIReferenceTests.repository

    /// README.md and docs/*.md, but docs/cli.md (generated from `--help`; CLIReferenceTests).
    static let documents: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") && $0 != "cli.md" }.sorted().map { "docs/" + $0 }
    }()

    @Test func everyFenceNamesItsLanguage() throws {
        for document in Self.documents {
            let text = try String(contentsOf: Self.repository.appendingPathComponent(document), encoding: .utf8)
            for block in DocBlock.parse(text, document: document) {
                #expect(!block.language.isEmpty, "\(document):\(block.line): a fence without a language (sh, console, text, ...)")
            }
        }
    }

    @Test(arguments: DocCommandTests.documents)
    func commandsRunAsWritten(document: String) throws {
        let text = try String(contentsOf: Self.repository.appendingPathComponent(document), encoding: .utf8)
        let blocks = DocBlock.parse(text, document: document).filter(\.isCommands)
        guard !blocks.isEmpty else { return }
        let clone = try DocClone()
        for block in blocks {
            for problem in clone.problems(in: block) {
                Issue.record(Comment(rawValue: problem))
            }
        }
    }

    /// The checks catch a flag renamed in a doc, whether its block runs or is skipped.
    @Test func aWrongFlagIsCaught() throws {
        let page = """
            ```sh
            fetchcast habits generate --seed 1 --out h.csv.gz
            ```

            <!-- doc-test: skip: too long to run -->
            ```sh
            S=h.csv.gz
            fetchcast evaluate $S --policies learned --budget 24 --out out/h
            ```

            <!-- doc-test: skip: too long to run -->
            ```console
            $ fetchcast bench serve --trace t.csv.gz --clients 4
            ```
            """
        let blocks = DocBlock.parse(page, document: "test.md")
        try #require(blocks.count == 3)
        let clone = try DocClone()
        #expect(clone.problems(in: blocks[0]) == [])
        let wrongRun = blocks[0].replacing("--seed", with: "--sead")
        #expect(clone.problems(in: wrongRun).first?.contains("--sead") == true, "\(clone.problems(in: wrongRun))")
        let skipped = clone.problems(in: blocks[1])
        #expect(skipped.count == 1 && skipped.first?.contains("--budget") == true, "\(skipped)")
        #expect(clone.problems(in: blocks[2]) == [])
        let wrongSkipped = clone.problems(in: blocks[2].replacing("--clients", with: "--client"))
        #expect(wrongSkipped.count == 1 && wrongSkipped.first?.contains("--client") == true, "\(wrongSkipped)")
        let wrongSubcommand = clone.problems(in: blocks[2].replacing("bench serve", with: "benchmark serve"))
        #expect(wrongSubcommand.first?.contains("benchmark") == true, "\(wrongSubcommand)")
    }
}

/// A fenced block of a markdown page.
struct DocBlock {
    var document: String
    /// The line of the opening fence (1-based).
    var line: Int
    var language: String
    var body: [String]
    /// The `doc-test` markers above the fence: key → value.
    var markers: [String: String]

    var isCommands: Bool { ["sh", "bash", "console"].contains(language) }
    var place: String { "\(document):\(line)" }

    /// The fenced blocks of `text`, with the `<!-- doc-test: key: value -->` lines just above each.
    static func parse(_ text: String, document: String) -> [DocBlock] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [DocBlock] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("```") else { index += 1; continue }
            let language = String(lines[index].dropFirst(3)).trimmingCharacters(in: .whitespaces)
            var markers: [String: String] = [:]
            var above = index - 1
            while above >= 0, let marker = Self.marker(lines[above]) {
                markers[marker.key] = marker.value
                above -= 1
            }
            var end = index + 1
            while end < lines.count && !lines[end].hasPrefix("```") { end += 1 }
            blocks.append(DocBlock(document: document, line: index + 1, language: language,
                                   body: Array(lines[(index + 1)..<min(end, lines.count)]), markers: markers))
            index = end + 1
        }
        return blocks
    }

    private static func marker(_ line: String) -> (key: String, value: String)? {
        let prefix = "<!-- doc-test: ", suffix = " -->"
        guard line.hasPrefix(prefix), line.hasSuffix(suffix) else { return nil }
        let inner = line.dropFirst(prefix.count).dropLast(suffix.count)
        guard let colon = inner.firstIndex(of: ":") else { return (String(inner), "") }
        return (String(inner[..<colon]), inner[inner.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// The block with `old` replaced by `new` in its body.
    func replacing(_ old: String, with new: String) -> DocBlock {
        var copy = self
        copy.body = body.map { $0.replacingOccurrences(of: old, with: new) }
        return copy
    }

    /// A console block's commands, each with the output lines shown under it.
    var consoleCommands: [(command: String, output: [String])] {
        var result: [(command: String, output: [String])] = []
        for line in body {
            if line.hasPrefix("$ ") {
                result.append((String(line.dropFirst(2)), []))
            } else if !result.isEmpty {
                result[result.count - 1].output.append(line)
            }
        }
        return result
    }

    /// The shell lines of the block, `\`-continuations joined: a console block's commands, or an
    /// sh block's lines.
    var shellLines: [String] {
        let raw = language == "console" ? consoleCommands.map(\.command) : body
        var lines: [String] = []
        var pending = ""
        for line in raw {
            if line.hasSuffix("\\") {
                pending += String(line.dropLast()) + " "
            } else {
                lines.append(pending + line)
                pending = ""
            }
        }
        if !pending.isEmpty { lines.append(pending) }
        return lines
    }
}

/// A copy of the repository's tracked files in a temporary folder, with `fetchcast` on `PATH`.
final class DocClone {
    let root: URL
    let clone: String
    let environment: [String: String]

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("fetchcast-doc-tests-\(UUID().uuidString)")
        clone = root.appendingPathComponent("fetchcast").path
        let bin = root.appendingPathComponent("bin").path, tmp = root.appendingPathComponent("tmp").path
        for folder in [clone, bin, tmp] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(atPath: bin + "/fetchcast", withDestinationPath: Workspace.executable.path)
        var env = ProcessInfo.processInfo.environment
        env["FETCHCAST_DB"] = nil
        env["FETCHCAST"] = nil
        env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["TMPDIR"] = tmp
        env["COLUMNS"] = "100"
        environment = env
        // The tracked files as they are in the working tree: what a clone of this commit holds.
        let listed = try Self.shell("git -C \"$1\" ls-files -z", arguments: [CLIReferenceTests.repository.path], in: root.path, environment: env)
        try #require(listed.status == 0, "git ls-files failed: \(listed.err)")
        let source = CLIReferenceTests.repository.path
        for name in listed.out.split(separator: "\0").map(String.init) {
            let from = source + "/" + name, to = clone + "/" + name
            guard FileManager.default.fileExists(atPath: from) else { continue }
            try FileManager.default.createDirectory(
                atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// What is wrong with `block` run (or, skipped, checked) in this clone; empty when nothing is.
    func problems(in block: DocBlock) -> [String] {
        do {
            if let reason = block.markers["skip"] {
                guard !reason.isEmpty else { return ["\(block.place): `doc-test: skip` needs a reason"] }
                return try check(block)
            }
            return try run(block)
        } catch {
            return ["\(block.place): \(error)"]
        }
    }

    private func run(_ block: DocBlock) throws -> [String] {
        var problems: [String] = []
        if let given = block.markers["given"] {
            let result = try Self.shell(given, in: clone, environment: environment)
            if result.status != 0 { return ["\(block.place): the given `\(given)` failed (\(result.status)): \(result.err)"] }
        }
        if block.language == "console" {
            let compare = block.markers["output not compared"] == nil
            for (command, output) in block.consoleCommands {
                let result = try Self.shell(Self.prologue + command, in: clone, environment: environment)
                if result.status != 0 {
                    problems.append("\(block.place): `\(command)` exited \(result.status): \(result.err)")
                    continue
                }
                let expected = Self.trimmed(output), actual = Self.trimmed(result.out.components(separatedBy: "\n"))
                if compare && !expected.isEmpty && expected != actual {
                    problems.append("\(block.place): `\(command)` printed\n\(actual.joined(separator: "\n"))\nbut the doc shows\n\(expected.joined(separator: "\n"))")
                }
            }
        } else {
            let script = Self.prologue + "set -e\n" + block.body.joined(separator: "\n")
            let result = try Self.shell(script, in: clone, environment: environment)
            if result.status != 0 {
                problems.append("\(block.place): the block exited \(result.status):\n\(block.body.joined(separator: "\n"))\nstderr: \(result.err.suffix(2000))")
            }
        }
        return problems
    }

    /// A skipped block: its syntax, the scripts it names, and each `fetchcast` command's
    /// subcommand and flags against `--help`.
    private func check(_ block: DocBlock) throws -> [String] {
        var problems: [String] = []
        let lines = block.shellLines
        let syntax = try Self.shell("bash -n <<'EOF'\n" + lines.joined(separator: "\n") + "\nEOF", in: clone, environment: environment)
        if syntax.status != 0 { problems.append("\(block.place): not valid shell: \(syntax.err)") }
        var assignments: [String] = []
        for line in lines {
            var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            // `S=...` or `SPLIT="..."` alone on its line: kept to expand the commands below it.
            if line.range(of: #"^[A-Za-z_][A-Za-z0-9_]*=("[^"]*"|'[^']*'|[^ "']*)\s*(#.*)?$"#, options: .regularExpression) != nil {
                assignments.append(line)
                continue
            }
            while let first = words.first, Self.isAssignment(first) || first == "time" { words.removeFirst() }
            guard let program = words.first else { continue }
            // A script of the repository; not one the reader makes, in an ignored folder (a venv's python).
            if program.contains("/") && !program.hasPrefix("/") && !program.hasPrefix("$"),
                try Self.shell("git -C \"$1\" check-ignore -q \"$2\"", arguments: [CLIReferenceTests.repository.path, program],
                               in: clone, environment: environment).status != 0
            {
                if !FileManager.default.isExecutableFile(atPath: clone + "/" + program) {
                    problems.append("\(block.place): `\(program)` is not an executable file of the repository")
                }
            }
            guard program == "fetchcast" else { continue }
            // The command's words as the shell expands them (the block's variables set), cut
            // before a pipe, a redirection or a comment.
            var text = line[line.range(of: "fetchcast")!.upperBound...]
            for stop in [" | ", " > ", " >> ", " 2>", " # ", " && "] {
                if let cut = text.range(of: stop) { text = text[..<cut.lowerBound] }
            }
            let script = assignments.joined(separator: "\n") + "\nprintf '%s\\0' " + text
            let expanded = try Self.shell(script, in: clone, environment: environment)
            guard expanded.status == 0 else {
                problems.append("\(block.place): cannot expand `\(line)`: \(expanded.err)")
                continue
            }
            let arguments = expanded.out.split(separator: "\0").map(String.init)
            problems += try checkArguments(arguments, line: line, place: block.place)
        }
        return problems
    }

    private var helps: [String: String] = [:]

    private func help(_ subcommand: [String]) throws -> String? {
        let key = subcommand.joined(separator: " ")
        if let known = helps[key] { return known }
        let result = try Self.shell("fetchcast \"$@\" --help", arguments: subcommand, in: clone, environment: environment)
        let text = result.status == 0 ? result.out : nil
        helps[key] = text
        return text
    }

    private func checkArguments(_ arguments: [String], line: String, place: String) throws -> [String] {
        guard let first = arguments.first, !first.hasPrefix("-") else { return [] }
        // `conditions generate`, `habits generate`: the longer subcommand when it is one.
        var subcommand = [first]
        if arguments.count > 1, ["conditions", "habits"].contains(first), arguments[1] == "generate" {
            subcommand.append(arguments[1])
        }
        let root = try help([])
        guard let root, root.contains("  \(first) ") || root.contains("  \(first)\n") else {
            return ["\(place): `fetchcast \(first)` is not a subcommand (`\(line)`)"]
        }
        guard let text = try help(subcommand) else { return ["\(place): `fetchcast \(subcommand.joined(separator: " ")) --help` failed"] }
        let flags = Self.flags(inHelp: text)
        var problems: [String] = []
        for argument in arguments.dropFirst(subcommand.count) where argument.hasPrefix("-") && argument != "-" {
            let flag = String(argument.split(separator: "=", maxSplits: 1)[0])
            if !flags.contains(flag) {
                problems.append("\(place): `fetchcast \(subcommand.joined(separator: " "))` has no flag \(flag) (`\(line)`)")
            }
        }
        return problems
    }

    /// What every block runs under: a failure anywhere in a pipe fails it, and SIGPIPE is
    /// ignored so that `fetchcast … | head` sees a closed pipe and exits 0, as it promises, rather
    /// than dying by the signal (which `pipefail` would count as a failure).
    static let prologue = "set -o pipefail\ntrap '' PIPE\n"

    /// The flags a `--help` defines: the names in the first column of its option lines
    /// (`  -o, --output <file>   ...`, `  --keep/--no-keep`).
    static func flags(inHelp help: String) -> Set<String> {
        var flags: Set<String> = []
        var options = false
        for line in help.split(separator: "\n") {
            if !line.hasPrefix(" ") { options = line.hasSuffix("OPTIONS:") }
            let text = line.drop(while: { $0 == " " })
            guard options, text.hasPrefix("-") else { continue }
            let column = text.range(of: "  ").map { text[..<$0.lowerBound] } ?? text[...]
            for word in column.split(whereSeparator: { " ,/".contains($0) }) where word.hasPrefix("-") {
                flags.insert(String(word.prefix(while: { $0 != "<" && $0 != "=" })))
            }
        }
        return flags
    }

    private static func isAssignment(_ word: String) -> Bool {
        word.range(of: #"^[A-Za-z_][A-Za-z0-9_]*="#, options: .regularExpression) != nil
    }

    private static func trimmed(_ lines: [String]) -> [String] {
        var result = lines.map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
        while result.last == "" { result.removeLast() }
        return result
    }

    /// Runs `script` with bash in `directory` (`$0`, `$1`... from `arguments`), at most
    /// `timeout` seconds (the whole process group is then killed).
    static func shell(
        _ script: String, arguments: [String] = [], in directory: String, environment: [String: String], timeout: Int = 240
    ) throws -> CommandResult {
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("fetchcast-doc-io-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: io) }
        let out = io.appendingPathComponent("out"), err = io.appendingPathComponent("err")
        for file in [out, err] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // timeout(1) runs the script in a process group of its own and kills all of it.
        process.arguments = ["timeout", "-k", "5", String(timeout), "bash", "-c", script] + (arguments.isEmpty ? [] : ["bash"] + arguments)
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                             stdout: try Data(contentsOf: out), stderr: try Data(contentsOf: err))
    }
}
