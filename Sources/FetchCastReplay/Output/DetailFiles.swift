#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Synchronization
import SystemPackage

/// `--detail`: every scored launch and every fetch, written per (policy run, device) to scratch
/// files while devices replay in parallel, then gathered in (policy, budget, device) order into
/// `launches.csv.gz`, `fetches.csv.gz` and `decisions.csv.gz`, so memory does not grow with the
/// trace.
final class DetailFiles: Sendable {
    static let launchHeader = "policy,budget,device,app,time,staleness_s,needy,fresh,covered_by_fetch,content_fresh\n"
    static let fetchHeader = "policy,budget,device,fetch_id,app,time,result,wakeup,joules,reason\n"
    static let decisionHeader = "policy,budget,device,app,time,value,launch_probability,new_data_probability,bar,fetched\n"
    static let planHeader = "policy,budget,device,planned_at,app,fetch_at,fetch_at_unix,launch_probability,new_data_probability,reason\n"
    /// Every output, with its scratch-file kind and header.
    static let outputs = [
        ("l", "launches.csv.gz", launchHeader), ("f", "fetches.csv.gz", fetchHeader),
        ("d", "decisions.csv.gz", decisionHeader), ("p", "plans.csv.gz", planHeader),
    ]

    private let directory: String
    private let plans: [ReplayPlan]
    private let deviceNames: [String]
    private let appNames: [String]
    /// The first scratch file that could not be created or written (recorders run on worker
    /// threads): ``assemble(into:protecting:)`` then fails rather than write detail with rows
    /// missing.
    private let scratchFailure = Mutex<EvaluationError?>(nil)

    init(directory parent: String?, plans: [ReplayPlan], scan: ScanResult, options: EvaluationOptions) throws(EvaluationError) {
        let base = parent.flatMap { $0.isEmpty ? nil : $0 } ?? TemporaryPath.directory
        do {
            directory = try TemporaryPath.makeDirectory(in: base, prefix: "fetchcast-detail-")
        } catch {
            throw .output(path: base, reason: "cannot create a scratch directory for --detail: \(error.reason) (set TMPDIR to a writable directory)")
        }
        self.plans = plans
        deviceNames = scan.devices.map(\.name)
        appNames = scan.appNames
    }

    deinit {
        // Scratch files an assembly did not reach (it failed) go too.
        for (kind, _, _) in Self.outputs {
            for plan in plans.indices { for device in deviceNames.indices { unlink(path(kind, plan: plan, device: device)) } }
        }
        rmdir(directory)
    }

    private func path(_ kind: String, plan: Int, device: Int) -> String { "\(directory)/\(kind)-\(plan)-\(device).csv" }

    /// A recorder for one (policy run, device); called from the device's worker thread.
    func recorder(plan: Int, device: Int) -> ReplayRecorder? {
        var sinks: [FileSink] = []
        for kind in ["l", "f", "d", "p"] {
            let part = path(kind, plan: plan, device: device)
            do { sinks.append(try FileSink(path: part)) } catch {
                noteFailure(.output(path: part, reason: "cannot create a --detail scratch file (\(error.problem.message)); set TMPDIR to a folder with room"))
                return nil
            }
        }
        let p = plans[plan]
        let prefix = CSVField.escape(p.policy) + "," + MetricsTable.budget(p.budget) + "," + CSVField.escape(deviceNames[device]) + ","
        return CSVRecorder(
            prefix: prefix, appNames: appNames, launches: sinks[0], fetches: sinks[1], decisions: sinks[2], plans: sinks[3],
            onFailure: { [weak self] sink in
                let reason = String(cString: strerror(sink.failure ?? EIO))
                self?.noteFailure(.output(path: sink.path, reason: "cannot write a --detail scratch file (\(reason)); set TMPDIR to a folder with room"))
            })
    }

    private func noteFailure(_ error: EvaluationError) {
        scratchFailure.withLock { if $0 == nil { $0 = error } }
    }

    /// Gathers the scratch files into the gzip outputs and removes them. Each output is
    /// written whole (``OutputFile``) or not at all.
    /// - Throws: ``EvaluationError/output(path:reason:)`` naming the file when a scratch file
    ///   could not be written or read, or an output could not be written.
    func assemble(into output: String, protecting protected: ProtectedFiles) throws(EvaluationError) {
        if let failure = scratchFailure.withLock({ $0 }) { throw failure }
        for (kind, name, header) in Self.outputs {
            let target = "\(output)/\(name)"
            let file: OutputFile
            do { file = try OutputFile(path: target, protecting: protected) } catch { throw EvaluationError(error) }
            let gz: GzipSink
            do { gz = try GzipSink(into: file, level: 6) } catch {
                throw .output(path: target, reason: "cannot create the file (\(error.problem.message))")
            }
            gz.write(header)
            for plan in plans.indices {
                for device in deviceNames.indices {
                    let part = path(kind, plan: plan, device: device)
                    try Self.copy(part, into: gz)
                    unlink(part)
                }
            }
            gz.finish()
            do { try file.commit() } catch { throw EvaluationError(error) }
        }
    }

    /// Appends a scratch file to an output, whole lines at a time.
    /// - Throws: ``EvaluationError/output(path:reason:)`` naming the scratch file when it is
    ///   missing or a read fails.
    static func copy(_ part: String, into gz: GzipSink) throws(EvaluationError) {
        let fd = open(part, O_RDONLY)
        guard fd >= 0 else { throw .output(path: part, reason: "a --detail scratch file is missing") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var carry: [UInt8] = []
        while true {
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: fd).read(into: $0) }  // retries EINTR
            } catch {
                // A failed read is not the end of the file: the output would lack its rows.
                throw .output(path: part, reason: "cannot read a --detail scratch file (\(error))")
            }
            if n == 0 { break }
            carry.append(contentsOf: buffer[0..<n])
            // Write whole lines only, so no UTF-8 sequence is cut.
            if let last = carry.lastIndex(of: 0x0A) {
                gz.write(String(decoding: carry[...last], as: UTF8.self))
                carry.removeSubrange(...last)
            }
        }
        if !carry.isEmpty { gz.write(String(decoding: carry, as: UTF8.self)) }
    }
}

/// Formats records as CSV rows into three scratch files.
final class CSVRecorder: ReplayRecorder {
    private let prefix: String
    private let appNames: [String]
    private let launches: FileSink
    private let fetches: FileSink
    private let decisions: FileSink
    private let plans: FileSink
    private let onFailure: (FileSink) -> Void

    init(
        prefix: String, appNames: [String], launches: FileSink, fetches: FileSink, decisions: FileSink, plans: FileSink,
        onFailure: @escaping (FileSink) -> Void
    ) {
        self.onFailure = onFailure
        self.prefix = prefix
        self.appNames = appNames
        self.launches = launches
        self.fetches = fetches
        self.decisions = decisions
        self.plans = plans
    }

    func record(_ l: LaunchRecord) {
        launches.write(prefix + CSVField.line([
            appNames[Int(l.app)], Timestamp.format(micros: l.timeMicros, utcOffsetSeconds: l.utcOffsetSeconds),
            CSVField.fixed(l.staleness, decimals: 3), l.needy ? "1" : "0", l.fresh ? "1" : "0",
            l.coveringFetch.map(String.init) ?? "", l.contentFresh ? "1" : "0",
        ]))
    }

    func record(_ f: FetchRecord) {
        let names = appNames
        fetches.write(prefix + CSVField.line([
            String(f.id), appNames[Int(f.app)],
            Timestamp.format(micros: Int64((f.time * 1_000_000).rounded()), utcOffsetSeconds: f.utcOffsetSeconds),
            f.result.name, String(f.wakeup), CSVField.fixed(f.joules, decimals: 3),
            f.reason.describe { $0 >= 0 && Int($0) < names.count ? names[Int($0)] : String($0) },
        ]))
    }

    func record(_ d: DecisionRecord) {
        let c = d.decision
        decisions.write(prefix + CSVField.line([
            appNames[Int(c.app)],
            Timestamp.format(micros: Int64((d.time * 1_000_000).rounded()), utcOffsetSeconds: d.utcOffsetSeconds),
            CSVField.fixed(c.value, decimals: 6), CSVField.fixed(c.launchProbability, decimals: 6),
            CSVField.fixed(c.newDataProbability, decimals: 6), c.bar.isFinite ? CSVField.fixed(c.bar, decimals: 6) : "",
            c.fetched ? "1" : "0",
        ]))
    }

    func record(_ p: PlanRecord) {
        let names = appNames
        let at = Timestamp.format(micros: Int64((p.plan.time * 1_000_000).rounded()), utcOffsetSeconds: p.utcOffsetSeconds)
        for f in p.plan.fetches {
            plans.write(prefix + CSVField.line([
                at, appNames[Int(f.app)],
                Timestamp.format(micros: Int64((f.time * 1_000_000).rounded()), utcOffsetSeconds: p.utcOffsetSeconds),
                CSVField.fixed(f.time, decimals: 6), CSVField.fixed(f.launchProbability, decimals: 6),
                CSVField.fixed(f.newDataProbability, decimals: 6),
                f.reason.describe { $0 >= 0 && Int($0) < names.count ? names[Int($0)] : String($0) },
            ]))
        }
    }

    func finish() {
        for sink in [launches, fetches, decisions, plans] where !sink.flush() { onFailure(sink) }
    }
}
