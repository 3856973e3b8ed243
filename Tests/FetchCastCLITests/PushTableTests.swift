import Foundation
import Testing

/// docs/push.md's delivery table is what the page's commands print on the development trace
/// (when `../shared/data` holds it): every row's hit rate, joules and pushes, compared with the
/// `summary.csv` and `delivery.csv` of the run its policy and delivery name.
struct PushTableTests {
    @Test(.enabled(if: DocSection.hasDevelopmentTrace, "needs ../shared/data/ubiqlog-dev.csv.gz"))
    func theDeliveryTableIsWhatItsCommandsPrint() throws {
        let section = try DocSection(page: "docs/push.md", heading: "What the push service does to a plan")
        let rows = section.tableRows(header: "| policy | delivery | hit rate |")
        try #require(rows.count == 17, "the table's rows: \(rows.count)")
        let outputs = try section.runCommands(settingS: DocSection.development)
        var runs: Set<String> = []
        for row in rows {
            let (run, policy) = try #require(Self.run(policy: row[0], delivery: row[1]), "\(section.page): no run for the row \(row)")
            runs.insert(run)
            let summary = try #require(try outputs.rows(run).first { $0["policy"] == policy }, "\(run): no \(policy)")
            var measured = [DocSection.rounded(summary["hit_rate"], 3), DocSection.rounded(summary["joules_per_device_day"], 1)]
            if row[1] == "direct" {
                measured += ["", "", "", "", ""]
            } else {
                let delivery = try #require(try outputs.rows(run, "delivery.csv").first { $0["policy"] == policy }, "\(run): no delivery of \(policy)")
                measured += ["sent_per_device_day", "delayed_per_device_day", "collapsed_per_device_day", "dropped_per_device_day"]
                    .map { DocSection.rounded(delivery[$0], 2) }
                measured.append(Self.delay(delivery["delay_p90_s"]))
            }
            #expect(Array(row[2...8]) == measured, "\(section.page), \(row[0]) through \(row[1]): the page shows \(Array(row[2...8])), its commands print \(measured)")
        }
        #expect(runs.count == 13, "every run of the block is a row of the table: \(runs.sorted())")
    }

    /// The run (an `--out` folder of the block) and policy a row's first two cells name.
    static func run(policy: String, delivery: String) -> (String, String)? {
        let interval = policy == "interval"
        let events = policy.contains("+ own events"), device = policy.contains("visibility device")
        let fetchAt = delivery.contains("at fetch_at"), strict = delivery.contains("0.5/h")
        let name: String
        switch true {
        case delivery == "direct": name = events ? "push-direct-event" : "push-direct"
        case delivery.hasPrefix("fcm"): name = device ? "push-fcm-device" + (fetchAt ? "-fetch-at" : "") : "push-fcm-hourly"
        case strict: name = "push-apns-strict" + (events ? "-event" : "") + (fetchAt ? "-fetch-at" : "")
        case delivery.hasPrefix("apns"): name = (events ? "push-apns-event" : "push-apns-hourly") + (fetchAt ? "-fetch-at" : "")
        default: return nil
        }
        return (name, interval ? "interval" : "planned")
    }

    /// A delay as the table writes it: "0 s", or minutes with one decimal.
    static func delay(_ seconds: String?) -> String {
        let value = Double(seconds ?? "") ?? .nan
        return value == 0 ? "0 s" : String(format: "%.1f min", value / 60)
    }
}
