import Foundation
import Testing

/// The release a user gets says one version everywhere (issue 41): `fetchcast --version`, the
/// newest released section of CHANGELOG.md and the README agree, and the README stays an
/// overview (at most 250 lines, every page of docs/ in its index).
struct ReleaseTests {
    static let repository = CLIReferenceTests.repository

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theVersionTheChangelogAndTheReadmeAgree() throws {
        let ws = try Workspace()
        let version = try ws.run(["--version"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.split(separator: ".").count == 3 && version.allSatisfy { $0.isNumber || $0 == "." }, "\(version)")
        // The first heading naming a version (an "Unreleased" section may come before it).
        let released = try Self.read("CHANGELOG.md").split(separator: "\n")
            .first { $0.hasPrefix("## ") && $0.dropFirst(3).first?.isNumber == true }
        #expect(released?.hasPrefix("## \(version) ") == true || released == "## \(version)", "\(String(describing: released)) against \(version)")
        #expect(try Self.read("README.md").contains("Release \(version)"), "the README names release \(version)")
    }

    @Test func theReadmeIsAnOverviewThatIndexesEveryDocument() throws {
        let readme = try Self.read("README.md")
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 251, "README.md: at most 250 lines")
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.repository.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }
        #expect(!docs.isEmpty)
        for page in docs { #expect(readme.contains("(docs/\(page))"), "README.md's index lacks docs/\(page)") }
    }
}
