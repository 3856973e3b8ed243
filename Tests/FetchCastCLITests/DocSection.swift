import FetchCastTestSupport
import Foundation
import Testing

/// A `## ` section of a page of docs/ whose numbers its own commands print: the section's first
/// `sh` block runs as written in a clone (`DocClone`), with `S` set to another trace when asked,
/// and its tables' cells are compared with the CSV files the block wrote (`QualityTableTests`,
/// `PushTableTests`).
struct DocSection {
    static let development = CLIReferenceTests.repository
        .deletingLastPathComponent().appendingPathComponent("shared/data/ubiqlog-dev.csv.gz").path
    static var hasDevelopmentTrace: Bool { FileManager.default.fileExists(atPath: development) }

    let page: String
    /// From the heading to the next `## ` heading.
    let text: String

    init(page: String, heading: String) throws {
        self.page = page
        let whole = try String(contentsOf: CLIReferenceTests.repository.appendingPathComponent(page), encoding: .utf8)
        let start = try #require(whole.range(of: "\n## \(heading)\n"), "\(page) has no section '\(heading)'")
        let rest = whole[start.upperBound...]
        text = String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    /// Runs the section's first `sh` block that sets `S` to the bundled sample in a fresh clone,
    /// `S` set to `trace` (as written when `nil`); the clone's `out` folder, kept while the
    /// result lives.
    func runCommands(settingS trace: String?) throws -> Outputs {
        let written = "S=Data/ubiqlog-sample.csv.gz"
        var block = try #require(
            DocBlock.parse(text, document: page).first { $0.language == "sh" && $0.body.contains(written) },
            "\(page): no block of the section sets \(written)")
        block.markers = [:]
        if let trace { block = block.replacing(written, with: "S=\(trace)") }
        let clone = try DocClone()
        let problems = clone.problems(in: block)
        try #require(problems.isEmpty, "\(problems)")
        return Outputs(folder: clone.clone + "/out", clone: clone)
    }

    /// The cells of the first table whose header line starts with `header`.
    func tableRows(header: String) -> [[String]] {
        let lines = text.components(separatedBy: "\n")
        guard let first = lines.firstIndex(where: { $0.hasPrefix(header) }) else { return [] }
        return lines[(first + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "**", with: "") }
        }
    }

    /// `value` as the pages print it: `places` decimals.
    static func rounded(_ value: String?, _ places: Int) -> String {
        String(format: "%.\(places)f", Double(value ?? "") ?? .nan)
    }

    /// What a block wrote under `out/`.
    struct Outputs {
        let folder: String
        let clone: DocClone

        /// The rows of `out/RUN/FILE` (a CSV with a header line), each by column name.
        func rows(_ run: String, _ file: String = "summary.csv") throws -> [[String: String]] {
            let csv = try String(contentsOfFile: folder + "/" + run + "/" + file, encoding: .utf8)
            let lines = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(lines[0], $0)) }
        }
    }
}
