import Foundation
import Testing

/// docs/cli.md is generated from `--help`; this keeps the two from drifting apart.
struct CLIReferenceTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["ingest", "stats", "devices", "files", "forget", "predict", "model", "evaluate", "export", "conditions", "conditions generate", "habits", "habits generate", "bench", "serve"])
    func helpMatchesTheReference(subcommand: String) throws {
        let reference = try String(contentsOf: Self.repository.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let result = try Workspace().run(subcommand.split(separator: " ").map(String.init) + ["--help"], environment: ["COLUMNS": "100"])
        #expect(result.status == 0)
        #expect(reference.contains(result.out), "docs/cli.md is stale for `\(subcommand)`: run scripts/cli-reference.sh")
    }
}
