#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastTrace
import Foundation

/// Writes `summary.csv`, `devices.csv`, `slices.csv` and `run.json` into the output directory.
enum OutputFiles {
    /// The files a run writes in its directory.
    static let names = ["summary.csv", "devices.csv", "slices.csv", "run.json", "delivery.csv"] + DetailFiles.outputs.map(\.1)

    /// Refuses an output directory that is a file, or whose outputs would replace one of
    /// `protected` (the store, an input). Called before the replay, so that a refused output
    /// costs nothing.
    static func check(directory: String, protecting protected: ProtectedFiles) throws(EvaluationError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .output(path: directory, reason: "is a file, not a directory; --out names the directory the outputs go to")
        }
        for name in names {
            do { try protected.check("\(directory)/\(name)") } catch { throw EvaluationError(error) }
        }
    }

    /// Creates the directory (and parents) if missing.
    static func prepare(directory: String) throws(EvaluationError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .output(path: directory, reason: "cannot create the output directory (\(error.localizedDescription))")
        }
    }

    /// Removes detail files of an earlier run (after this run wrote its own outputs), so that
    /// every file there comes from this run.
    static func removeStaleDetail(directory: String) {
        for (_, name, _) in DetailFiles.outputs { unlink("\(directory)/\(name)") }
    }

    /// Removes the `delivery.csv` of an earlier run through a push service (after a `direct`
    /// run wrote its own outputs).
    static func removeStaleDelivery(directory: String) {
        unlink("\(directory)/delivery.csv")
    }

    static func write(
        _ e: Evaluation, options: EvaluationOptions, toolVersion: String, to directory: String, protecting protected: ProtectedFiles
    ) throws(EvaluationError) {
        let extra = e.usesConditions ? MetricsTable.conditionColumns : []
        func values(_ m: DeviceMetrics) -> [String] {
            MetricsTable.values(m) + (e.usesConditions ? MetricsTable.conditionValues(m, bytesKnown: e.bytesKnown) : [])
        }
        try writeFile("\(directory)/summary.csv", protected) { out in
            out.write(CSVField.line(["policy", "budget"] + MetricsTable.columns + extra))
            for r in e.summary {
                out.write(CSVField.line([r.policy, MetricsTable.budget(r.budget)] + values(r.metrics)))
            }
        }
        try writeFile("\(directory)/devices.csv", protected) { out in
            out.write(CSVField.line(["policy", "budget", "device"] + MetricsTable.columns + extra))
            for r in e.devices {
                out.write(CSVField.line([r.policy, MetricsTable.budget(r.budget), r.device ?? ""] + values(r.metrics)))
            }
        }
        try writeFile("\(directory)/slices.csv", protected) { out in
            out.write(CSVField.line(["policy", "budget"] + MetricsTable.sliceColumns))
            for r in e.summary {
                for values in MetricsTable.sliceValues(r.metrics.slices) {
                    out.write(CSVField.line([r.policy, MetricsTable.budget(r.budget)] + values))
                }
            }
        }
        if options.delivery.isPush {
            // Semantics d1: one row per (policy, budget) whose fetches went through the push service.
            try writeFile("\(directory)/delivery.csv", protected) { out in
                out.write(CSVField.line(["policy", "budget"] + MetricsTable.deliveryColumns))
                for r in e.summary where e.pushedPolicies.contains(r.policy) {
                    out.write(CSVField.line(
                        [r.policy, MetricsTable.budget(r.budget)] + MetricsTable.deliveryValues(r.metrics, delivery: options.delivery.kind)))
                }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let manifest = RunManifest(e, options: options, toolVersion: toolVersion)
        guard let data = try? encoder.encode(manifest) else {
            throw .output(path: "\(directory)/run.json", reason: "cannot encode the run manifest")
        }
        try writeFile("\(directory)/run.json", protected) { out in
            out.write(String(decoding: data, as: UTF8.self) + "\n")
        }
    }

    /// Writes one file whole (``OutputFile``): a failure leaves the earlier run's file.
    private static func writeFile(_ path: String, _ protected: ProtectedFiles, _ body: (OutputFile) -> Void) throws(EvaluationError) {
        do {
            let file = try OutputFile(path: path, protecting: protected)
            body(file)
            try file.commit()
        } catch {
            throw EvaluationError(error)
        }
    }
}
