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
        }
    }
}
