import Testing

/// Numeric options outside their range (``Limits``) are usage errors naming the flag, the range
/// and the value, before any work: no trap on a budget past `Int`, no "Missing value" for a
/// negative number, no hours-long run for a budget or replan interval of no use.
struct OptionRangeCLITests {
    @Test(arguments: [
        (["predict", "--budget", "inf"], "--budget must be between 1 and 1440", "(got inf)"),
        (["predict", "--budget", "1e19"], "--budget must be between 1 and 1440", "(got 1e+19)"),
        (["predict", "--budget", "1441"], "--budget must be between 1 and 1440", "(got 1441)"),
        (["predict", "--count", "-1"], "--count must be between 1 and 1000", "(got -1)"),
        (["predict", "--count", "0"], "--count must be between 1 and 1000", "(got 0)"),
        (["export", "predictions", "--budget", "inf"], "--budget must be between 1 and 1440", "(got inf)"),
        (["export", "model", "--top-apps", "-2"], "--top-apps must be between 1 and 1000", "(got -2)"),
        (["evaluate", "--out", "o", "--budgets", "1e19"], "--budgets must be between 1 and 1440", "(got 1e19)"),
        (["evaluate", "--out", "o", "--budgets", "12,1e9"], "--budgets must be between 1 and 1440", "(got 1e9)"),
        (["evaluate", "--out", "o", "--budgets", "-5"], "--budgets must be between 1 and 1440", "(got -5)"),
        (["evaluate", "--out", "o", "--replan", "-1h"], "--replan must be between 60 and 604800", "(got -1h)"),
        (["evaluate", "--out", "o", "--replan", "1s"], "--replan must be between 60 and 604800", "(got 1s)"),
        (["evaluate", "--out", "o", "--tau", "-30m"], "--tau must be between 1 and 86400", "(got -30m)"),
        (["evaluate", "--out", "o", "--top-apps", "-1"], "--top-apps must be between 1 and 1000", "(got -1)"),
        (["evaluate", "--out", "o", "--threads", "-1"], "--threads must be between 0 and 1024", "(got -1)"),
    ])
    func anOptionOutsideItsRangeIsAUsageErrorNamingIt(arguments: [String], message: String, got: String) throws {
        let w = try Workspace()
        let r = try w.run(arguments)
        #expect(!r.signalled, "\(arguments): killed by a signal")
        #expect(r.status == 64, "\(arguments): \(r.err)")
        #expect(r.err.contains(message) && r.err.contains(got), "\(arguments): \(r.err)")
        #expect(!r.err.contains("Missing value"), "\(r.err)")
        #expect(r.out.isEmpty)
    }

    @Test func theLimitsThemselvesAreAccepted() throws {
        let w = try Workspace()
        try w.write("habits.csv", PredictCLITests.habits())
        #expect(try w.run(["ingest", "habits.csv"]).status == 0)
        let r = try w.run(["predict", "--device", "phone", "--budget", "1440", "--count", "1000", "--format", "csv"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.hasPrefix("device,app,fetch_at"))
    }
}
