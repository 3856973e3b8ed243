import FetchCastModel
import FetchCastPredict

extension Exporter {
    /// `predictions`: what `fetchcast predict` plans over `[from, to)`, per device.
    ///
    /// The window (default: 24 hours from each device's last event) is planned in consecutive
    /// 24-hour chunks, each from the model as the store holds it (planned fetches are not fed
    /// back, since their results are unknown), keeping the fetches before the window's end.
    static func writePredictions<Out: TextOutputStream>(_ request: ExportRequest, snapshot: ModelRepository.Snapshot, writer: inout ExportWriter<Out>, to out: inout Out) async throws {
        if let from = request.from, let to = request.to, to <= from {
            throw ExportError.emptyWindow(from: from, to: to)
        }
        let day = 86_400.0
        for device in devices(request, snapshot: snapshot) {
            guard let last = device.model.lastEventTime else { continue }
            let start = request.from ?? last
            let end = request.to ?? start + day
            guard end > start else { continue }
            let days = (end - start) / day
            guard days <= Double(maximumPredictionDays) else { throw ExportError.windowTooLong(days: days) }
            var chunk = start
            while chunk < end {
                let predictions = try await Predictor.predict(
                    PredictionRequest(device: device.name, app: request.app, at: chunk, count: .max,
                                      budget: request.budget, topApps: request.topApps ?? 5),
                    snapshot: snapshot)
                for p in predictions where p.fetchAtUnix < min(chunk + day, end) {
                    writer.write([
                        .text(p.device), .text(p.app), .text(p.fetchAt), .real(p.launchProbability, decimals: 6),
                        .real(p.newDataProbability, decimals: 6), .text(p.reason),
                    ], to: &out)
                }
                chunk += day
            }
        }
    }
}
