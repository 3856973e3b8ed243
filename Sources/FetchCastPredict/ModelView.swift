import FetchCastModel
import FetchCastTrace

/// The terminal view of a device's model (`fetchcast model`).
public struct ModelView {
    let snapshot: ModelRepository.Snapshot
    let deviceID: Int64
    let deviceName: String
    let appID: Int32?
    let model: DeviceModel

    /// Prepares the view.
    /// - Throws: ``PredictionError`` for an unknown device or app.
    public init(snapshot: ModelRepository.Snapshot, device: String, app: String?) throws {
        guard let id = snapshot.device(named: device), let model = snapshot.models[id] else {
            throw PredictionError(description: "no device '\(device)' in the store\(snapshot.didYouMean(device: device)); see `fetchcast devices` (device ids are case-sensitive)")
        }
        self.snapshot = snapshot
        deviceID = id
        deviceName = device
        self.model = model
        if let app {
            guard let a = snapshot.app(named: app) else { throw PredictionError(description: "no app '\(app)' in the store\(snapshot.didYouMean(app: app)); app ids are case-sensitive") }
            appID = Int32(truncatingIfNeeded: a)
        } else {
            appID = nil
        }
    }

    /// Expected session starts per hour for the app (or all top apps), by hour of week.
    public func grid() -> [Double] {
        let now = model.lastEventTime ?? 0
        let prior = snapshot.prior(for: deviceID)
        let apps = appID.map { [$0] } ?? Array(model.appsBySessions.prefix(20))
        return (0..<HourOfWeek.count).map { slot in
            apps.reduce(0) { $0 + model.sessionRate(app: $1, slot: slot, now: now, prior: prior) }
        }
    }

    /// Writes the grid, quiet hours and co-usage pairs.
    public func write<Out: TextOutputStream>(to out: inout Out) {
        let name = { (id: Int32) in snapshot.appNames[Int64(id)] ?? String(id) }
        let now = model.lastEventTime ?? 0
        let values = grid()
        let peak = max(values.max() ?? 0, 1e-9)
        let shades: [Character] = [" ", "·", "░", "▒", "▓", "█"]
        out.write("\(deviceName) — \(appID.map(name) ?? "all apps"): expected sessions per hour (peak \(CSVField.fixed(peak, decimals: 2))/h), local time\n")
        out.write("     " + (0..<24).map { $0 % 3 == 0 ? ($0 < 10 ? "0\($0)" : "\($0)") + " " : "" }.joined() + "\n")
        let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        for d in 0..<7 {
            var line = days[d] + "  "
            for h in 0..<24 {
                let v = values[d * 24 + h] / peak
                line.append(shades[min(shades.count - 1, Int((v * Double(shades.count - 1)).rounded()))])
            }
            out.write(line + "\n")
        }
        out.write("observed \(CSVField.fixed(model.observedHours(at: now), decimals: 0)) h (recency-weighted, half-life \(CSVField.fixed(model.configuration.halfLifeDays, decimals: 0)) days)\n")
        let apps = appID.map { [$0] } ?? Array(model.appsBySessions.prefix(5))
        for app in apps {
            guard let quiet = quietHours(app: app) else { continue }
            let listed = quiet.isEmpty ? "none" : quiet.map { ($0 < 10 ? "0" : "") + String($0) + ":00" }.joined(separator: " ")
            out.write("quiet hours for \(name(app)) (new content < 0.5/h): \(listed)\n")
        }
        let pairs = strongestPairs()
        if !pairs.isEmpty {
            out.write("strongest co-usage (P(session of B within 30 min after A), trigger launches):\n")
            for (x, y, p, n) in pairs {
                out.write("  \(name(x)) → \(name(y))  p=\(CSVField.fixed(p, decimals: 2))  n=\(CSVField.fixed(n, decimals: 0))\n")
            }
        }
    }

    /// The local hours (0–23) when the app's new content averages under 0.5 an hour over the
    /// week; `nil` when the app has no content evidence.
    func quietHours(app: Int32) -> [Int]? {
        guard let rates = model.contentRates(app: app, now: model.lastEventTime ?? 0) else { return nil }
        return (0..<24).filter { h in (0..<7).reduce(0.0) { $0 + rates[$1 * 24 + h] } / 7 < 0.5 }
    }

    /// The co-usage pairs that matter for fetching (into the app shown, or into the device's
    /// top apps), strongest first: (trigger, app, P(session of app within τ after trigger), trigger launches).
    func strongestPairs() -> [(Int32, Int32, Double, Double)] {
        let targets = Set(appID.map { [$0] } ?? Array(model.appsBySessions.prefix(10)))
        return Array(model.strongestPairs(limit: 200, now: model.lastEventTime ?? 0, prior: snapshot.prior(for: deviceID), minimumTrials: 10)
            .filter { targets.contains($0.1) }.prefix(10))
    }
}
