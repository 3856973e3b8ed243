import FetchCastCore

/// A few devices' daily habits as trace rows (without the header), for tests that need days of
/// plausible history: from Monday 2023-11-13, local time UTC+1, each device opens `mail` at about
/// 08:0x, `chat` at 08:`chatTens`x, `news` at about 12:3x and `mail` again at about 20:0x, the
/// minutes shifting with the day and the device. Rows are sorted (by time, then text).
package enum HabitTrace {
    package static func rows(devices: [String], days: Range<Int>, chatTens: Int = 1) -> [String] {
        var rows: [String] = []
        for day in days {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            for (i, d) in devices.enumerated() {
                rows += ["\(date)T08:0\((day + i) % 7):00+01:00,\(d),mail,launch,,,", "\(date)T08:\(chatTens)\(day % 7):00+01:00,\(d),chat,launch,,,",
                         "\(date)T12:3\(day % 7):00+01:00,\(d),news,launch,,,", "\(date)T20:0\((day + 2 * i) % 7):00+01:00,\(d),mail,launch,,,"]
            }
        }
        return rows.sorted()
    }
}
