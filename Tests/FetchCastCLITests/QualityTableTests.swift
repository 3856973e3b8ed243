import Foundation
import Testing

/// docs/model.md's "Quality, reproducibly" numbers are what its own commands print today: the
/// table (the development trace, when `../shared/data` holds it) and the bundled sample's
/// sentence below it, compared with the `summary.csv` files of the page's block, rounded as the
/// page rounds them. Both had gone stale for several releases while the code moved on.
struct QualityTableTests {
    static func section() throws -> DocSection { try DocSection(page: "docs/model.md", heading: "Quality, reproducibly") }

    /// The table's rows, each compared with the run its set-up names.
    @Test(.enabled(if: DocSection.hasDevelopmentTrace, "needs ../shared/data/ubiqlog-dev.csv.gz"))
    func theDevelopmentTraceTableIsWhatItsCommandsPrint() throws {
        let section = try Self.section()
        let rows = section.tableRows(header: "| policy | who runs it | budget |")
        try #require(rows.count == 17, "the table's rows: \(rows.count)")
        let outputs = try section.runCommands(settingS: DocSection.development)
        for row in rows {
            let summary = try #require(try Self.summary(outputs, setUp: row[0], budget: row[2]), "no run for \(row[0]) at \(row[2])")
            let shown = Array(row[3...7])
            let measured = [
                DocSection.rounded(summary["hit_rate"], 3), DocSection.rounded(summary["fresh_ratio"], 3),
                DocSection.rounded(summary["fetches_per_device_day"], 2), DocSection.rounded(summary["wakeups_per_device_day"], 2),
                DocSection.rounded(summary["joules_per_device_day"], 1),
            ]
            // `none` fetches nothing: the page writes its fetches, wakeups and joules as a plain 0.
            let expected = row[0] != "none" ? measured : measured.prefix(2) + measured.dropFirst(2).map { Double($0) == 0 ? "0" : $0 }
            #expect(shown == Array(expected), "\(section.page), \(row[0]) at \(row[2]): the page shows \(shown), its commands print \(measured)")
        }
    }

    /// The sentence on the bundled sample ("the commands above give at a cap of 24: interval
    /// 0.098, …"): the block as written, no `../shared` needed.
    @Test func theSampleSentenceIsWhatItsCommandsPrint() throws {
        let section = try Self.section()
        let lead = "the commands above give at a cap of 24: "
        let start = try #require(section.text.range(of: lead), "\(section.page): the sample's sentence is gone")
        let sentence = String(section.text[start.upperBound...]).components(separatedBy: ".\n")[0]
        let claims = Self.claims(sentence.replacingOccurrences(of: "\n", with: " "))
        try #require(claims.count == 8, "\(section.page): the sentence's claims: \(claims)")
        let outputs = try section.runCommands(settingS: nil)
        for (setUp, shown) in claims {
            let summary = try #require(try Self.summary(outputs, setUp: setUp, budget: "24"), "no run for \(setUp)")
            let measured = DocSection.rounded(summary["hit_rate"], 3)
            #expect(shown == measured, "\(section.page): the sample's \(setUp) is \(shown), its commands print \(measured)")
        }
    }

    /// "interval 0.098, weekly 0.053, planned (device, 1 h + events) 0.304, …" as (set-up, value).
    static func claims(_ sentence: String) -> [(String, String)] {
        let pattern = #"(none|interval|weekly|hourly|learned|oracle|planned \(device, 1 h \+ events\)|planned \(1 h\)|planned \(app\))\s+([0-9]\.[0-9]{3})"#
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: sentence, range: NSRange(sentence.startIndex..., in: sentence)).map { match in
            let name = String(sentence[Range(match.range(at: 1), in: sentence)!])
            let value = String(sentence[Range(match.range(at: 2), in: sentence)!])
            let setUp = ["planned (device, 1 h + events)": "planned, device, 1 h + events", "planned (1 h)": "planned, device, 1 h",
                         "planned (app)": "planned, app, 1 h + own events"][name] ?? name
            return (setUp, value)
        }
    }

    /// The summary row of the table's set-up (its first column) at `budget`.
    static func summary(_ outputs: DocSection.Outputs, setUp: String, budget: String) throws -> [String: String]? {
        let (run, policy) = switch setUp {
        case "planned, device, 1 h + events": ("quality-planned-event", "planned")
        case "planned, device, 1 h": ("quality-planned-hourly", "planned")
        case "planned, app, 1 h + own events": ("quality-planned-app", "planned")
        default: ("quality", setUp)
        }
        let rows = try outputs.rows(run).filter { $0["policy"] == policy }
        // `none` fetches nothing at any budget: the table shows it once, at 0.
        return policy == "none" ? rows.first : rows.first { $0["budget"] == budget }
    }
}
