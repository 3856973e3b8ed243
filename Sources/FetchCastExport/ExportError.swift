import FetchCastPredict
import FetchCastTrace

/// Why an export could not be made; the message names what to fix.
package enum ExportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The device is not in the store.
    case unknownDevice(String)
    /// The app is not in the store.
    case unknownApp(String)
    /// The window is empty or reversed (`from`, `to`, Unix seconds).
    case emptyWindow(from: Double, to: Double)
    /// The `predictions` window is longer than ``Exporter/maximumPredictionDays`` days.
    case windowTooLong(days: Double)
    /// A table asked of the wrong source: `events` of a repository, a model's table of the
    /// event log.
    case wrongSource(ExportKind)

    package var description: String {
        switch self {
        case .unknownDevice(let name):
            return "no device '\(name)' in the store; see `fetchcast devices` (device ids are case-sensitive)."
        case .unknownApp(let name):
            return "no app '\(name)' in the store; app ids are case-sensitive."
        case .emptyWindow(let from, let to):
            return "the window from \(CSVField.fixed(from, decimals: 0)) to \(CSVField.fixed(to, decimals: 0)) (Unix seconds) is empty; pass a --to later than --from."
        case .windowTooLong(let days):
            return "the predictions window spans \(CSVField.fixed(days, decimals: 1)) days; plan at most \(Exporter.maximumPredictionDays) days at a time (narrow --from/--to)."
        case .wrongSource(let kind):
            return kind == .events
                ? "the events table is read from the event log, not from the model: export it with Exporter.exportEvents(_:from:to:)."
                : "the \(kind.rawValue) table is made by the model: export it from a ModelRepository with Exporter.export(_:from:to:onSaveFailure:)."
        }
    }
}
