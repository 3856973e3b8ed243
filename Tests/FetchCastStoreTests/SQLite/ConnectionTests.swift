import Testing
@testable import FetchCastStore

struct ConnectionTests {
    /// Text is bound and read with its byte length: nothing cuts it at a NUL.
    @Test(arguments: ["d\u{0}x", "\u{0}", "", "é", "e\u{301}", " d1 "])
    func bindsAndReadsTextByteForByte(text: String) throws {
        let c = try Connection(path: ":memory:", create: true)
        let s = try c.prepare("SELECT ?, length(CAST(? AS BLOB)), typeof(?)")
        try s.bind([.text(text), .text(text), .text(text)])
        #expect(try s.step())
        #expect(Array(s.text(0).utf8) == Array(text.utf8))
        #expect(s.int(1) == Int64(text.utf8.count))
        #expect(s.text(2) == "text")
    }

    @Test func keepsIdsThatDifferOnlyAfterANulApart() throws {
        let c = try Connection(path: ":memory:", create: true)
        try c.execute("CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        let insert = try c.prepare("INSERT INTO names(name) VALUES (?)")
        for name in ["d", "d\u{0}x", "d\u{0}y"] {
            insert.bindText(1, name)
            try insert.run()
        }
        #expect(try c.scalarInt("SELECT count(DISTINCT name) FROM names") == 3)
        #expect(try c.scalarInt("SELECT id FROM names WHERE name = ?", [.text("d\u{0}y")]) == 3)
    }
}
