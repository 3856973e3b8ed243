#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastTrace
import Foundation

/// Writes `summary.csv`, `devices.csv` and `run.json` into the output directory.
enum OutputFiles {
    /// Creates the directory (and parents) if missing, and removes detail files of an earlier
    /// run, so that every file there comes from this run.
    static func prepare(directory: String) throws(EvaluationError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .output(path: directory, reason: "cannot create the output directory (\(error.localizedDescription))")
        }
        for (_, name, _) in DetailFiles.outputs { unlink("\(directory)/\(name)") }
    }

    static func write(_ e: Evaluation, options: EvaluationOptions, toolVersion: String, to directory: String) throws(EvaluationError) {
        let extra = e.usesConditions ? MetricsTable.conditionColumns : []
        func values(_ m: DeviceMetrics) -> [String] {
            MetricsTable.values(m) + (e.usesConditions ? MetricsTable.conditionValues(m, bytesKnown: e.bytesKnown) : [])
        }
        try writeFile("\(directory)/summary.csv") { out in
            out.write(CSVField.line(["policy", "budget"] + MetricsTable.columns + extra))
            for r in e.summary {
                out.write(CSVField.line([r.policy, MetricsTable.budget(r.budget)] + values(r.metrics)))
            }
        }
        try writeFile("\(directory)/devices.csv") { out in
            out.write(CSVField.line(["policy", "budget", "device"] + MetricsTable.columns + extra))
            for r in e.devices {
                out.write(CSVField.line([r.policy, MetricsTable.budget(r.budget), r.device ?? ""] + values(r.metrics)))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let manifest = RunManifest(e, options: options, toolVersion: toolVersion)
        guard let data = try? encoder.encode(manifest) else {
            throw .output(path: "\(directory)/run.json", reason: "cannot encode the run manifest")
        }
        try writeFile("\(directory)/run.json") { out in
            out.write(String(decoding: data, as: UTF8.self) + "\n")
        }
    }

    private static func writeFile(_ path: String, _ body: (FileSink) -> Void) throws(EvaluationError) {
        let sink: FileSink
        do {
            sink = try FileSink(path: path)
        } catch {
            throw .output(path: path, reason: "cannot create the file (\(error.problem.message))")
        }
        body(sink)
        guard sink.flush() else {
            throw .output(path: path, reason: "cannot write the file (\(String(cString: strerror(sink.failure ?? 0))))")
        }
    }
}
