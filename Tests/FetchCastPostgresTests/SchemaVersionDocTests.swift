import Foundation
@testable import FetchCastPostgres
import Testing

/// docs/postgres.md states the schema version the code writes (it once said 3 while the code wrote 4).
struct SchemaVersionDocTests {
    @Test func docsNameTheCurrentSchemaVersion() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/postgres.md"), encoding: .utf8)
        #expect(text.contains("- Schema version \(PostgresSchema.currentVersion), in the `schema_version` row"))
        // Every "schema version N" the page states as current is the code's.
        for line in text.split(separator: "\n") where line.hasPrefix("- Schema version ") {
            #expect(line.hasPrefix("- Schema version \(PostgresSchema.currentVersion),"), "\(line)")
        }
    }
}
