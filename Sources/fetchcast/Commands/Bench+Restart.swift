import FetchCastBench
import FetchCastCore
import FetchCastStore
import FetchCastTrace

extension FetchCast.Bench {
    /// `bench restart`: the drill, its table on stdout, and a non-zero exit when it failed.
    func runRestart(db: String, command: String, directory: String, log: inout FileSink) throws {
        var options = RestartBenchmark.Options(postgresURL: db, restartCommand: command)
        options.clients = clients
        let r: RestartBenchmark.Result
        do {
            r = try RestartBenchmark.run(options, directory: directory, executable: ChildProcess.currentExecutablePath, log: &log)
        } catch {
            throw FetchCast.fail("\(error)")
        }
        var out = FileSink.standardOutput()
        let statuses = r.statuses.sorted { $0.key < $1.key }.map { "\($0.key == 0 ? "none" : String($0.key)):\($0.value)" }.joined(separator: " ")
        let table = [["posts", "acknowledged", "lost_acknowledged", "plans", "answers", "503_without_retry_after", "restart_s", "plans_back_after_s", "server_alive"],
                     [String(r.posts), String(r.acknowledged), String(r.lostAcknowledged.count), String(r.plans), statuses,
                      String(r.unavailableWithoutRetryAfter), CSVField.fixed(r.commandSeconds, decimals: 2),
                      r.recoverySeconds.map { CSVField.fixed($0, decimals: 2) } ?? "never", r.serverAlive ? "yes" : "no"]]
        TextTable.write(table, rightAligned: Set([0, 1, 2, 3, 5, 6, 7]), to: &out)
        try FetchCast.finish(out)
        guard r.passed(recoveryTarget: options.recoveryTarget) else {
            var problems: [String] = []
            if r.commandStatus != 0 { problems.append("the restart command exited with \(r.commandStatus)") }
            if !r.lostAcknowledged.isEmpty { problems.append("\(r.lostAcknowledged.count) acknowledged POSTs lost rows (\(r.lostAcknowledged.prefix(5).joined(separator: ", ")))") }
            if !r.serverAlive { problems.append("serve exited") }
            if r.unavailableWithoutRetryAfter > 0 { problems.append("\(r.unavailableWithoutRetryAfter) answers 503 without Retry-After") }
            let odd = r.statuses.keys.filter { ![0, 200, 503].contains($0) }.sorted()
            if !odd.isEmpty { problems.append("answers with status \(odd.map(String.init).joined(separator: ", "))") }
            if (r.recoverySeconds ?? .infinity) > options.recoveryTarget {
                problems.append("plans answered again \(r.recoverySeconds.map { CSVField.fixed($0, decimals: 2) + " s" } ?? "never") after the database's return (target \(CSVField.fixed(options.recoveryTarget, decimals: 0)) s)")
            }
            throw FetchCast.fail("the restart drill failed: " + problems.joined(separator: "; "))
        }
        log.write("passed: no acknowledged POST lost, plans answered again \(CSVField.fixed(r.recoverySeconds ?? 0, decimals: 2)) s after the database's return (target \(CSVField.fixed(options.recoveryTarget, decimals: 0)) s)\n")
    }
}
