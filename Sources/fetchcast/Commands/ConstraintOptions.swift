import ArgumentParser
import FetchCastModel
import FetchCastTrace
import Foundation

/// `--constraints FILE` and `--system ios|none`, shared by `predict` and `evaluate`.
struct ConstraintOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Per-app fetch constraints, JSON: {\"apps\": {\"APP\" or \"*\": {\"network\": \"any\"|\"unmetered\", \"charging\": true, \"battery_not_low\": true}}} (docs/conditions.md; default: none).",
        valueName: "file"))
    var constraints: String?

    @Option(help: ArgumentHelp("The system's own rules: ios (no background refresh in Low Power Mode or below 20% battery) or none.", valueName: "system"))
    var system: SystemRules = .none

    /// The constraints and rules, read from the file when one was given.
    func load() throws -> FetchConstraints {
        guard let path = constraints else { return FetchConstraints(system: system) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FetchCast.fail("\(path): cannot read the constraints file (check the path)")
        }
        do {
            return try FetchConstraints(json: data, file: path, system: system)
        } catch {
            throw FetchCast.fail(error.description)
        }
    }
}

extension SystemRules: ExpressibleByArgument {}
