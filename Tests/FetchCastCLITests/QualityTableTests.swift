import FetchCastTestSupport
import Foundation
import Testing

/// docs/model.md's "Quality, reproducibly" numbers are what its own commands print today: the
/// page's `sh` block runs as written in a clone (`DocClone`), and every number the section states
/// is compared with the `summary.csv` files it wrote, rounded as the page rounds it. The table
/// (the development trace, when `../shared/data` holds it: `S` set to it) and the bundled
/// sample's sentence below it had gone stale for several releases while the code moved on.
struct QualityTableTests {
    static let page = "docs/model.md"
    static let development = CLIReferenceTests.repository
        .deletingLastPathComponent().appendingPathComponent("shared/data/ubiqlog-dev.csv.gz").path

    /// The table's rows, each compared with the run its set-up names.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: QualityTableTests.development), "needs ../shared/data/ubiqlog-dev.csv.gz"))
    func theDevelopmentTraceTableIsWhatItsCommandsPrint() throws {
        let text = try Self.section()
        let runs = try Self.run(settingS: Self.development)
        let rows = Self.tableRows(text)
        try #require(rows.count == 17, "the table's rows: \(rows.count)")
        for row in rows {
            let summary = try #require(runs.row(setUp: row[0], budget: row[2]), "no run for \(row[0]) at \(row[2])")
            let shown = [row[3], row[4], row[5], row[6], row[7]].map { $0.replacingOccurrences(of: "**", with: "") }
            let measured = [
                Self.rounded(summary["hit_rate"], 3), Self.rounded(summary["fresh_ratio"], 3),
                Self.rounded(summary["fetches_per_device_day"], 2), Self.rounded(summary["wakeups_per_device_day"], 2),
                Self.rounded(summary["joules_per_device_day"], 1),
            ]
            // `none` fetches nothing: the page writes its fetches, wakeups and joules as a plain 0.
            let expected = row[0] != "none" ? measured : measured.prefix(2) + measured.dropFirst(2).map { Double($0) == 0 ? "0" : $0 }
            #expect(shown == Array(expected), "\(Self.page), \(row[0]) at \(row[2]): the page shows \(shown), its commands print \(measured)")
        }
    }

    /// The sentence on the bundled sample ("the commands above give at a cap of 24: interval
    /// 0.098, …"): the block as written, no `../shared` needed.
    @Test func theSampleSentenceIsWhatItsCommandsPrint() throws {
        let text = try Self.section()
        let lead = "the commands above give at a cap of 24: "
        let start = try #require(text.range(of: lead), "\(Self.page): the sample's sentence is gone")
        let sentence = String(text[start.upperBound...]).components(separatedBy: ".\n")[0]
        let claims = Self.claims(sentence.replacingOccurrences(of: "\n", with: " "))
        try #require(claims.count == 8, "\(Self.page): the sentence's claims: \(claims)")
        let runs = try Self.run(settingS: nil)
        for (setUp, shown) in claims {
            let summary = try #require(runs.row(setUp: setUp, budget: "24"), "no run for \(setUp)")
            #expect(shown == Self.rounded(summary["hit_rate"], 3), "\(Self.page): the sample's \(setUp) is \(shown), its commands print \(Self.rounded(summary["hit_rate"], 3))")
        }
    }

    // MARK: - The page

    /// From "## Quality, reproducibly" to the next `## ` heading.
    static func section() throws -> String {
        let text = try String(contentsOf: CLIReferenceTests.repository.appendingPathComponent(page), encoding: .utf8)
        let start = try #require(text.range(of: "\n## Quality, reproducibly\n"), "\(page) has no section 'Quality, reproducibly'")
        let rest = text[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    /// The cells of the first table whose header starts `| policy | who runs it | budget |`.
    static func tableRows(_ text: String) -> [[String]] {
        let lines = text.components(separatedBy: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| policy | who runs it | budget |") }) else { return [] }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// "interval 0.098, weekly 0.053, planned (device, 1 h + events) 0.304, …" as (set-up, value).
    static func claims(_ sentence: String) -> [(String, String)] {
        let pattern = #"(none|interval|weekly|hourly|learned|oracle|planned \(device, 1 h \+ events\)|planned \(1 h\)|planned \(app\))\s+([0-9]\.[0-9]{3})"#
        let regex = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(sentence.startIndex..., in: sentence)
        return regex.matches(in: sentence, range: range).map { match in
            let name = String(sentence[Range(match.range(at: 1), in: sentence)!])
            let value = String(sentence[Range(match.range(at: 2), in: sentence)!])
            let setUp = ["planned (device, 1 h + events)": "planned, device, 1 h + events", "planned (1 h)": "planned, device, 1 h",
                         "planned (app)": "planned, app, 1 h + own events"][name] ?? name
            return (setUp, value)
        }
    }

    static func rounded(_ value: String?, _ places: Int) -> String {
        String(format: "%.\(places)f", Double(value ?? "") ?? .nan)
    }

    // MARK: - The runs

    /// The summaries of the section's block, run in a clone with `S` set to `path` (as written
    /// when `nil`).
    static func run(settingS path: String?) throws -> Runs {
        let text = try section()
        var block = try #require(DocBlock.parse(text, document: page).first { $0.language == "sh" }, "\(page): the section's commands are gone")
        let written = "S=Data/ubiqlog-sample.csv.gz"
        try #require(block.body.contains(written), "\(page): the block no longer sets \(written)")
        block.markers = [:]
        if let path { block = block.replacing(written, with: "S=\(path)") }
        let clone = try DocClone()
        let problems = clone.problems(in: block)
        try #require(problems.isEmpty, "\(problems)")
        return try Runs(folder: clone.clone + "/out", keepAlive: clone)
    }

    /// The four `summary.csv` files of the block's `--out` folders.
    struct Runs {
        var summaries: [String: [[String: String]]] = [:]
        let keepAlive: DocClone

        init(folder: String, keepAlive: DocClone) throws {
            self.keepAlive = keepAlive
            for name in ["quality", "quality-planned-event", "quality-planned-hourly", "quality-planned-app"] {
                let csv = try String(contentsOfFile: folder + "/" + name + "/summary.csv", encoding: .utf8)
                let lines = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
                summaries[name] = lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(lines[0], $0)) }
            }
        }

        /// The summary row of the table's set-up (its first column) at `budget`.
        func row(setUp: String, budget: String) -> [String: String]? {
            let plain = setUp.replacingOccurrences(of: "**", with: "")
            let (folder, policy) = switch plain {
            case "planned, device, 1 h + events": ("quality-planned-event", "planned")
            case "planned, device, 1 h": ("quality-planned-hourly", "planned")
            case "planned, app, 1 h + own events": ("quality-planned-app", "planned")
            default: ("quality", plain)
            }
            let rows = summaries[folder]?.filter { $0["policy"] == policy } ?? []
            // `none` fetches nothing at any budget: the table shows it once, at 0.
            if policy == "none" { return rows.first }
            return rows.first { $0["budget"] == budget }
        }
    }
}
