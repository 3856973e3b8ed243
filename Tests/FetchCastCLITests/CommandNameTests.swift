import Foundation
import Testing

/// Every command of the CLI names itself (`CommandConfiguration(commandName:)`): without it
/// ArgumentParser derives the name from the type's name with `String(describing:)`, whose dynamic
/// casts scanned the binary's conformance records at every start (`fetchcast bench predict`: CLI
/// p95 50.2–50.8 ms against 45.5–47.1 ms with the names given). Read from the sources, since the
/// executable's module cannot be imported.
struct CommandNameTests {
    @Test func everyCommandTypeGivesItsName() throws {
        let folder = CLIReferenceTests.repository.appendingPathComponent("Sources/fetchcast")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        var commands = 0
        for file in files.sorted() {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let types = text.matches(of: #/struct \w+: (Async)?ParsableCommand\b/#).count
            var named = 0, configurations = 0
            var rest = text[...]
            while let call = rest.range(of: "CommandConfiguration(") {
                // The call's arguments, to its closing parenthesis.
                var depth = 1, end = call.upperBound
                while depth > 0, end < rest.endIndex {
                    if rest[end] == "(" { depth += 1 } else if rest[end] == ")" { depth -= 1 }
                    end = rest.index(after: end)
                }
                configurations += 1
                if rest[call.upperBound..<end].contains("commandName:") { named += 1 }
                rest = rest[end...]
            }
            #expect(named == configurations && configurations == types,
                    "\(file): \(types) command types, \(configurations) configurations, \(named) with commandName")
            commands += types
        }
        #expect(commands >= 17, "command types found: \(commands)")
    }
}
