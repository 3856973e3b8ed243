import Testing
import FetchCastCore

struct SymbolTableTests {
    @Test func internsEachNameOnce() {
        let table = SymbolTable()
        let a = table.intern("com.example.news")
        let b = table.intern("dev-1")
        #expect(a == 0 && b == 1)
        #expect(table.intern("com.example.news") == a)
        #expect(table.count == 2)
        #expect(table.name(a) == "com.example.news")
        #expect(table.allNames == ["com.example.news", "dev-1"])
    }

    @Test func looksUpWithoutAdding() {
        let table = SymbolTable()
        #expect(table.lookup("x") == nil)
        #expect(table.count == 0)
        let x = table.intern("x")
        #expect(table.lookup("x") == x)
        #expect(table.lookup("xy") == nil)
    }

    @Test func keepsEmptyAndNonASCIINamesApart() {
        let table = SymbolTable()
        let empty = table.intern("")
        let cafe = table.intern("café")
        let composed = table.intern("cafe\u{301}")  // canonically equal, different bytes
        #expect(Set([empty, cafe, composed]).count == 3)
        #expect(table.intern("") == empty)
        #expect(table.name(cafe) == "café")
    }

    @Test func internsFromBytesLikeFromStrings() {
        let table = SymbolTable()
        let fromString = table.intern("dev-42")
        let fromBytes = Array("dev-42".utf8).withUnsafeBytes { table.intern($0) }
        #expect(fromBytes == fromString)
    }

    @Test func survivesGrowthPastItsFirstCapacity() {
        let table = SymbolTable()
        let names = (0..<5_000).map { "device-\($0)" }
        let symbols = names.map { table.intern($0) }
        #expect(symbols == (0..<5_000).map { Int32($0) })
        for (name, symbol) in zip(names, symbols) {
            #expect(table.intern(name) == symbol)
            #expect(table.lookup(name) == symbol)
            #expect(table.name(symbol) == name)
        }
        #expect(table.count == 5_000)
    }
}
