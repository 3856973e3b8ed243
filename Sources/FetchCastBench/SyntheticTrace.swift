import FetchCastCore
import FetchCastTrace

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a synthetic gzip CSV trace of a given size for benchmarks: devices with daily
/// routines over a set of apps, launches and fetch results, in time order.
enum SyntheticTrace {
    static let apps = [
        "com.whatsapp", "com.viber.voip", "com.facebook.katana", "com.google.android.gm", "com.android.chrome",
        "com.twitter.android", "com.instagram.android", "com.spotify.music", "com.google.android.youtube",
        "com.bbc.news", "com.nytimes.android", "com.reddit.frontpage", "com.slack", "org.telegram.messenger",
        "com.google.android.apps.maps", "com.android.mms", "com.android.dialer", "com.netflix.mediaclient",
        "com.duolingo", "com.weather.Weather",
    ]

    /// Writes a benchmark trace of `rows` events to `directory/name-rows.csv.gz`, logging it.
    /// - Returns: The path and its size in bytes.
    static func generate<Log: TextOutputStream>(rows: Int, in directory: String, name: String, log: inout Log) throws(TraceError) -> (path: String, bytes: Int64) {
        let path = "\(directory)/\(name)-\(rows).csv.gz"
        log.write("generating \(rows) rows → \(path)\n")
        try write(path: path, rows: rows)
        return (path, (try? RawInput(path: path))?.size ?? 0)
    }

    /// Writes `rows` events over `devices` devices to a gzip CSV at `path`.
    /// - Complexity: O(rows).
    static func write(path: String, rows: Int, devices: Int = 200, seed: UInt64 = 42) throws(TraceError) {
        let file: OutputFile
        do { file = try OutputFile(path: path) } catch {
            throw TraceError(file: path, line: 0, column: 0, problem: .cannotWrite(error.reason))
        }
        let out = try GzipSink(into: file)
        var rng = SeededGenerator(seed: seed)
        out.write(TraceColumn.header + "\n")
        let start: Int64 = 1_700_000_000
        let span = Int64(max(rows / max(devices, 1), 1)) * 900  // ~one event per device per 15 min
        let step = Double(span) / Double(max(rows, 1)) * Double(devices)
        var t = Double(start)
        let deviceNames = (0..<devices).map { "dev-\($0)" }
        var line = ""
        line.reserveCapacity(128)
        for _ in 0..<rows {
            t += Double(rng.next() % 1000) / 1000 * step / Double(devices) * 2
            let d = Int(rng.next() % UInt64(devices))
            let favourite = (d * 7) % apps.count
            let a = rng.next() % 3 == 0 ? Int(rng.next() % UInt64(apps.count)) : (favourite + Int(rng.next() % 4)) % apps.count
            let offset: Int32 = d % 3 == 0 ? 3600 : (d % 3 == 1 ? 0 : -18000)
            let isFetch = rng.next() % 10 == 0
            line = Timestamp.format(micros: Int64(t) * 1_000_000, utcOffsetSeconds: offset)
            line += ",\(deviceNames[d]),\(apps[a]),"
            if isFetch {
                let result = ["newData", "noData", "noData", "failed"][Int(rng.next() % 4)]
                line += "fetch,\(result),\(rng.next() % 50_000),\(rng.next() % 3000)\n"
            } else {
                line += "launch,,,\(rng.next() % 600_000)\n"
            }
            out.write(line)
        }
        out.finish()
        do { try file.commit() } catch {
            throw TraceError(file: path, line: 0, column: 0, problem: .cannotWrite(error.reason))
        }
    }
}
