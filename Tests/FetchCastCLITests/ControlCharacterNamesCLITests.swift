import Foundation
import Testing

/// A file name with an ESC or a newline in it is shown escaped, never raw, in every message and
/// table that names it (a raw ESC could drive the terminal, a raw newline forge a line).
struct ControlCharacterNamesCLITests {
    private static let name = "evil\u{1B}[31mred\nfake.csv"
    private static let shown = "evil\\e[31mred\\nfake.csv"

    private func hasNoRawControl(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value == 0x1B } && !text.contains("red\nfake")
    }

    @Test func ingestFilesAndForgetEscapeTheName() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try FileManager.default.moveItem(atPath: ws.path("good.csv"), toPath: ws.path(Self.name))
        let ingest = try ws.run(["ingest", Self.name])
        #expect(ingest.status == 0, "\(ingest.err)")
        #expect(ingest.err.contains(Self.shown), "\(ingest.err)")
        #expect(hasNoRawControl(ingest.err))
        let again = try ws.run(["ingest", Self.name])
        #expect(again.err.contains("\(Self.shown): already ingested"), "\(again.err)")
        #expect(hasNoRawControl(again.err))
        let files = try ws.run(["files"])
        #expect(files.out.contains(Self.shown), "\(files.out)")
        #expect(hasNoRawControl(files.out))
        let forget = try ws.run(["forget", Self.name])
        #expect(forget.status == 0, "\(forget.err)")
        #expect(forget.err.contains("forgot \(Self.shown):"), "\(forget.err)")
        #expect(hasNoRawControl(forget.err))
    }

    @Test func aBadFileIsNamedEscaped() throws {
        let ws = try Workspace()
        try ws.write(Self.name, "time,device,app,event\nnot a time,d,a,launch\n")
        let ingest = try ws.run(["ingest", Self.name])
        #expect(ingest.status == 1)
        #expect(ingest.err.contains("\(Self.shown):2"), "\(ingest.err)")
        #expect(hasNoRawControl(ingest.err))
    }

}
