import Foundation
import Testing

/// `fetchcast predict`, `model` and `export` end to end: stdout, stderr and exit status apart.
struct PredictCLITests {
    struct PredictionRecord: Decodable {
        var schema: Int
        var device: String
        var app: String
        var fetch_at: String
        var fetch_at_unix: Double
        var launch_probability: Double
        var new_data_probability: Double
        var reason: String
    }

    /// Two weeks of one device opening mail at 08:05, chat at 08:15 and news at 12:40, local
    /// time +01:00.
    static func habits() -> String {
        var rows = ["time,device,app,event,result,bytes,duration_ms"]
        for day in 1...14 {
            let d = day < 10 ? "0\(day)" : "\(day)"
            rows.append("2023-11-\(d)T08:05:00+01:00,phone,mail,launch,,,")
            rows.append("2023-11-\(d)T08:15:00+01:00,phone,chat,launch,,,")
            rows.append("2023-11-\(d)T12:40:00+01:00,phone,news,launch,,,")
        }
        return rows.joined(separator: "\n") + "\n"
    }

    @Test func predictPrintsJSONLinesForTheRequestedDeviceNotBeforeAt() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits())
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let r = try w.run(["predict", "--device", "phone", "--at", "2023-11-14T08:05:01+01:00", "--count", "4", "--format", "json"])
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n")
        #expect(!lines.isEmpty && lines.count <= 4)
        let records = try lines.map { try JSONDecoder().decode(PredictionRecord.self, from: Data($0.utf8)) }
        let at = 1_699_945_501.0  // 2023-11-14T08:05:01+01:00
        for p in records {
            #expect(p.schema == 1 && p.device == "phone")
            #expect(["mail", "chat", "news"].contains(p.app))
            #expect(p.fetch_at_unix >= at)
            #expect(p.fetch_at.hasSuffix("+01:00"))
            #expect((0...1).contains(p.launch_probability) && (0...1).contains(p.new_data_probability))
            // Worded by strength (Explanation.Strength); two weeks of habits: its own history.
            // A fetch ahead of a habit counts the days instead.
            #expect(["usually opens", "often opens", "sometimes opens", "may open"].contains {
                p.reason.hasPrefix("phone \($0) \(p.app) ") || p.reason.hasPrefix("right after mail, phone \($0) \(p.app) ")
            } || p.reason.hasPrefix("phone opened \(p.app) between "),
                    "\(p.reason)")
        }
        // The habit: one second after mail, chat (opened ten minutes after it every day) is fetched.
        let chat = try #require(records.first, "nothing planned")
        #expect(chat.app == "chat" && chat.fetch_at == "2023-11-14T08:05:01+01:00", "\(chat)")
    }

    /// A store on a full disk: reading works, saving the folded model does not. predict, model
    /// and export answer anyway, from memory, and warn on stderr.
    @Test(arguments: [
        // A random trace has no habit worth a fetch: the plans are asked of the habits' phone.
        ["predict", "--device", "phone", "--at", "2023-11-14T08:05:01+01:00", "--format", "json"],
        ["predict", "--count", "1", "--at", "2023-11-14T08:05:01+01:00", "--format", "json"],
        ["model", "--device", "dev-1"],
        ["export", "predictions", "--device", "dev-1"],
    ])
    func answersFromMemoryWhenTheDiskIsFull(arguments: [String]) throws {
        let w = try Workspace()
        try w.generateTrace("t.csv.gz", rows: 20_000)  // 200 devices, 20 apps
        try w.write("habits.csv", Self.habits())
        try #require(try w.run(["ingest", "t.csv.gz", "habits.csv"]).status == 0)
        // 64 KiB per file: the store (written by the ingest) is read, but its write-ahead log
        // cannot take the folded state of 200 devices.
        let full = try w.run(arguments, fileSizeLimitKiB: 64)
        #expect(full.status == 0, "\(full.err)")
        #expect(full.err.hasPrefix("warning: the learned state could not be saved in the store (fetchcast.sqlite: "), "\(full.err)")
        #expect(full.err.contains("); answered from memory"), "\(full.err)")
        #expect(!full.out.isEmpty)
        // With room again: the same answer, saved this time (no warning).
        let roomy = try w.run(arguments)
        #expect(roomy.status == 0)
        // No warning (a note of the fetches --count left out may be there).
        #expect(roomy.err.split(separator: "\n").allSatisfy { $0.hasPrefix("note: ") && $0.contains("not shown (--count") }, "\(roomy.err)")
        if arguments.contains("json") {
            let decoder = JSONDecoder()
            let records = { (r: CommandResult) in try r.out.split(separator: "\n").map { try decoder.decode(PredictionRecord.self, from: Data($0.utf8)) } }
            let (a, b) = (try records(full), try records(roomy))
            #expect(!a.isEmpty)
            #expect(a.map(\.fetch_at) == b.map(\.fetch_at))
            #expect(a.map(\.launch_probability) == b.map(\.launch_probability))
        } else {
            #expect(full.out == roomy.out)
        }
    }

    @Test func predictForAnUnknownDeviceFailsWithAMessage() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits())
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let r = try w.run(["predict", "--device", "tablet"])
        #expect(r.status == 1)
        #expect(r.out.isEmpty)
        #expect(r.err.contains("no device 'tablet'"))
    }

    /// No reason of a planned fetch cites a count of 0 days as its evidence ("opened weather
    /// between 07:00 and 07:30 on 0 of the last 39 weekdays it was used (p=0.16)"): every fetch of
    /// every device of the bundled sample and of generated habits, planned a week ahead from
    /// several instants.
    @Test func noReasonCitesZeroDaysForAFetch() throws {
        let w = try Workspace()
        #expect(try w.run(["habits", "generate", "--seed", "3", "--devices-per-archetype", "2", "-o", "habits.csv"]).status == 0)
        #expect(try w.run(["ingest", PostgresCLITests.sample, "habits.csv"]).status == 0)
        var reasons = 0
        for at in ["2013-11-20T03:00:00Z", "2013-12-18T07:00:00Z", "2014-01-15T03:00:00Z", "2024-03-20T02:00:00+01:00", "2024-04-01T12:00:00+01:00"] {
            let r = try w.run(["predict", "--at", at, "--horizon", "168", "--count", "1000", "--format", "json"])
            #expect(r.status == 0, "\(r.err)")
            for line in r.out.split(separator: "\n") {
                let record = try JSONDecoder().decode(PredictionRecord.self, from: Data(line.utf8))
                reasons += 1
                #expect(record.reason.range(of: #" on 0 of the last "#) == nil, "\(at): \(record.device) \(record.app): \(record.reason)")
            }
        }
        #expect(reasons > 100, "the walk saw few fetches")
    }

    /// A habit of some weekdays only is planned on those days only (issue 39 item 4): the
    /// generated gym user (fitness at about 06:15 on Mondays, Wednesdays and Fridays), asked on
    /// a Sunday night of its seventh week for the week ahead, is fetched for on Monday,
    /// Wednesday and Friday mornings and on no other day.
    @Test func aHabitOfSomeWeekdaysIsPlannedOnThoseDaysOnly() throws {
        let w = try Workspace()
        #expect(try w.run(["habits", "generate", "--archetypes", "gym-mwf", "--days", "49", "-o", "gym.csv"]).status == 0)
        #expect(try w.run(["ingest", "gym.csv"]).status == 0)
        let r = try w.run([
            "predict", "--device", "gym-mwf-1", "--app", "fitness", "--at", "2024-04-21T22:00:00+01:00", "--horizon", "168", "--format", "json",
        ])
        #expect(r.status == 0, "\(r.err)")
        var days: [String] = []
        for line in r.out.split(separator: "\n") {
            let record = try JSONDecoder().decode(PredictionRecord.self, from: Data(line.utf8))
            days.append(String(record.fetch_at.prefix(10)))
            #expect(record.fetch_at.dropFirst(11).hasPrefix("05:") || record.fetch_at.dropFirst(11).hasPrefix("06:"), "\(record.fetch_at)")
        }
        // Monday 22nd, Wednesday 24th, Friday 26th; with weekdays alone Tuesday and Thursday too.
        #expect(Set(days) == ["2024-04-22", "2024-04-24", "2024-04-26"], "\(r.out)")
    }

    /// An empty plan says its true cause: eight days after the device's last event the rule
    /// that stops plans after a week of silence, not "no habit falls in that time" (the daily
    /// habits do).
    @Test func anEmptyPlanAfterASilenceNamesTheRuleThatStopsIt() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits())
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let r = try w.run(["predict", "--device", "phone", "--at", "2023-11-23T06:00:00+01:00"])
        #expect(r.status == 0)
        #expect(r.err.contains("nothing planned for phone in the next 24 hours: the device has been silent for 8 days (no event since 2023-11-14T11:40:00Z), and plans stop 7 days after a device's last event"), "\(r.err)")
        #expect(!r.err.contains("no habit of its apps falls"))
    }

    /// A plan asked inside the device's history is made from the events before --at, and so is
    /// its note: the device came back after a silence, and asked during it the note names the
    /// silence before --at, not the later launches (it once read the store's latest model and
    /// said "no app's chance … is worth one" for a device silent for days).
    @Test func anEmptyPlanInsideTheHistoryNamesTheSilenceBeforeAt() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits() + "2023-11-30T08:05:00+01:00,phone,mail,launch,,,\n")
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let r = try w.run(["predict", "--device", "phone", "--at", "2023-11-23T06:00:00+01:00"])
        #expect(r.status == 0 && r.out.split(separator: "\n").count == 1, "\(r.out)")
        #expect(r.err.contains("nothing planned for phone in the next 24 hours: the device has been silent for 8 days (no event since 2023-11-14T11:40:00Z), and plans stop 7 days after a device's last event"), "\(r.err)")
    }

    /// The bundled sample asked at 02:00, as the pickup clock's checks ask (issue 39 item 2): the
    /// note says why no look before the first use is planned, with the device's last launch.
    @Test func anEmptyPlanAtNightNamesThePickupClocksRule() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Data/ubiqlog-sample.csv.gz").path
        let w = try Workspace()
        #expect(try w.run(["ingest", "--quiet", sample]).status == 0)
        // 17_F's last launch is at 07:30:01 the morning before: 18 h before 02:00.
        let late = try w.run(["predict", "--device", "17_F", "--at", "2013-12-21T02:00:00Z"])
        #expect(late.status == 0 && late.out.split(separator: "\n").count == 1, "\(late.out)")
        #expect(late.err.contains(
            "nothing planned for 17_F in the next 24 hours: no fetch is worth a radio wakeup before its next event, no habit of its apps "
            + "falls in that time, and looks before its first use after 2 h unused stop 14 hours after its last launch, 2013-12-20T07:30:01Z "
            + "(18 hours before the plan's start)"), "\(late.err)")
        // 1_M's last launch is at 22:54: the clock looks, and no app's chance is worth a wakeup.
        let night = try w.run(["predict", "--device", "1_M", "--at", "2014-12-01T02:00:00Z"])
        #expect(night.status == 0 && night.out.split(separator: "\n").count == 1, "\(night.out)")
        #expect(night.err.contains("and no app's chance of being opened first after 2 h unused is worth one"), "\(night.err)")
    }

    /// A plan longer than --count says how many fetches it left out, and shows the plan's first
    /// ones (it once cut a long horizon's plan silently).
    @Test func aPlanCutByCountSaysHowManyWereLeftOut() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits())
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let base = ["predict", "--device", "phone", "--horizon", "168", "--format", "csv"]
        let all = try w.run(base + ["--count", "1000"])
        #expect(all.status == 0)
        let rows = all.out.split(separator: "\n").dropFirst()
        try #require(rows.count > 2, "a week of plans holds more than two fetches")
        #expect(!all.err.contains("not shown"))
        let cut = try w.run(base + ["--count", "2"])
        #expect(cut.status == 0)
        #expect(Array(cut.out.split(separator: "\n").dropFirst()) == Array(rows.prefix(2)))
        #expect(cut.err.contains("note: \(rows.count - 2) more fetch\(rows.count - 2 == 1 ? "" : "es") of phone in the next 168 hours not shown (--count 2 a device)"), "\(cut.err)")
    }

    /// After `forget` of a device's only file, `predict` and `model` give the same answer.
    @Test func aDeviceWhoseEventsWereForgottenIsNoDeviceToPredictOrModel() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits())
        try w.write("tablet.csv", "time,device,app,event\n2023-11-02T08:00:00Z,tablet,mail,launch\n")
        #expect(try w.run(["ingest", "habits.csv", "tablet.csv"]).status == 0)
        #expect(try w.run(["forget", "tablet.csv"]).status == 0)
        for command in [["predict", "--device", "tablet"], ["model", "--device", "tablet"]] {
            let r = try w.run(command)
            #expect(r.status == 1, "\(command)")
            #expect(r.err.contains("no device 'tablet' in the store"), "\(command): \(r.err)")
        }
    }

    @Test func aMistypedDeviceOrAppNamesTheClosestOne() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits())
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let device = try w.run(["predict", "--device", "phnoe"])
        #expect(device.status == 1)
        #expect(device.err.contains("no device 'phnoe' in the store (did you mean 'phone'?)"), "\(device.err)")
        let app = try w.run(["predict", "--device", "phone", "--app", "mial"])
        #expect(app.status == 1)
        #expect(app.err.contains("no app 'mial' in the store (did you mean 'mail'?)"), "\(app.err)")
        let model = try w.run(["model", "--device", "phone", "--app", "nwes"])
        #expect(model.status == 1)
        #expect(model.err.contains("(did you mean 'news'?)"), "\(model.err)")
        let command = try w.run(["predcit", "--device", "phone"])
        #expect(command.status == 64)
        #expect(command.err.contains("'predcit' is not a fetchcast command; did you mean 'predict'?"), "\(command.err)")
    }

    @Test(arguments: ["--at", "--not-before"])
    func predictRejectsABadTimeAsUsage(flag: String) throws {
        let w = try Workspace()
        let r = try w.run(["predict", flag, "yesterday"])
        #expect(r.status == 64)
        #expect(r.err.contains(flag))
    }

    @Test func modelShowsAGridAndExportWritesCSV() throws {
        let w = try Workspace()
        try w.write("habits.csv", Self.habits())
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let model = try w.run(["model", "--device", "phone", "--app", "mail"])
        #expect(model.status == 0)
        #expect(model.out.contains("Mon") && model.out.contains("Sun"))
        let export = try w.run(["export", "model", "--device", "phone", "--app", "mail"])
        #expect(export.status == 0)
        let rows = export.out.split(separator: "\n")
        #expect(rows.first?.hasPrefix("device,app,weekday,hour,launch_probability") == true)
        #expect(rows.count == 1 + 168)
    }
}
