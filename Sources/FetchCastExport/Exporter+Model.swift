import FetchCastModel
import FetchCastPredict
import Foundation

extension Exporter {
    /// `model`: per device, app and local hour of week, as of the device's last event.
    ///
    /// `launch_probability` = 1 − exp(−`session_rate_per_hour`) is P(a session starts within
    /// the hour); `new_data_rate_per_hour` is empty for apps without content evidence;
    /// `observed_hours` and `sessions` are the recency-weighted evidence in that slot before
    /// smoothing and shrinkage.
    static func writeModel<Out: TextOutputStream>(_ request: ExportRequest, snapshot: ModelRepository.Snapshot, writer: inout ExportWriter<Out>, to out: inout Out) {
        for device in devices(request, snapshot: snapshot) {
            let model = device.model
            let now = model.lastEventTime ?? 0
            let prior = snapshot.prior(for: device.id)
            let observed = (0..<HourOfWeek.count).map { model.observedHours(slot: $0, now: now) }
            for app in apps(request, model: model, snapshot: snapshot, defaultTop: nil) {
                let appName = snapshot.appNames[Int64(app)] ?? String(app)
                let content = model.contentRates(app: app, now: now)
                for slot in 0..<HourOfWeek.count {
                    let rate = model.sessionRate(app: app, slot: slot, now: now, prior: prior)
                    writer.write([
                        .text(device.name), .text(appName), .integer(Int64(slot / 24)), .integer(Int64(slot % 24)),
                        .real(1 - exp(-rate), decimals: 6), .real(rate, decimals: 6),
                        content.map { .real($0[slot], decimals: 6) } ?? .null,
                        .real(observed[slot], decimals: 3), .real(model.sessionCount(app: app, slot: slot, now: now), decimals: 3),
                    ], to: &out)
                }
            }
        }
    }

    /// `cousage`: per device, every ordered pair (app, next_app) with at least one session of
    /// `next_app` within τ after a launch of `app`: the shrunk probability and the
    /// recency-weighted launches of `app` behind it (`support`). Highest probability first.
    static func writeCoUsage<Out: TextOutputStream>(_ request: ExportRequest, snapshot: ModelRepository.Snapshot, writer: inout ExportWriter<Out>, to out: inout Out) {
        for device in devices(request, snapshot: snapshot) {
            let model = device.model
            let now = model.lastEventTime ?? 0
            let prior = snapshot.prior(for: device.id)
            let name = { (id: Int32) in snapshot.appNames[Int64(id)] ?? String(id) }
            let keep: Set<Int32>? = request.topApps.map { Set(model.appsBySessions.prefix($0)) }
            var rows = model.strongestPairs(limit: .max, now: now, prior: prior, minimumTrials: 0)
                .filter { keep == nil || (keep!.contains($0.0) && keep!.contains($0.1)) }
                .map { (app: name($0.0), next: name($0.1), p: $0.2, n: $0.3) }
                .filter { request.app == nil || $0.app == request.app }
            rows.sort { ($0.p, $1.app, $1.next) > ($1.p, $0.app, $0.next) }
            for r in rows {
                writer.write([.text(device.name), .text(r.app), .text(r.next), .real(r.p, decimals: 6), .real(r.n, decimals: 3)], to: &out)
            }
        }
    }
}
