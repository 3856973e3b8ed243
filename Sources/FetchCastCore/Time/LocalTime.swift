/// Wall-clock views of an instant on a device whose UTC offset is known.
///
/// FetchCast learns in the user's local time: "opens the news app around 13:00" means 13:00 on
/// the phone, wherever it is. These helpers turn (instant, offset) into local day, hour and
/// hour of week without Foundation.
package enum LocalTime {
    /// Microseconds in a second and a day.
    package static let microsPerSecond: Int64 = 1_000_000
    package static let microsPerDay: Int64 = 86_400_000_000

    /// The local calendar day number (days since 1970-01-01 on the local wall clock).
    @inline(__always)
    package static func day(time: Double, utcOffsetSeconds: Int32) -> Int {
        Int(((time + Double(utcOffsetSeconds)) / 86_400).rounded(.down))
    }

    /// The local calendar day number of a microsecond instant.
    @inline(__always)
    package static func day(micros: Int64, utcOffsetSeconds: Int32) -> Int {
        let local = micros + Int64(utcOffsetSeconds) * microsPerSecond
        return Int(local >= 0 ? local / microsPerDay : (local - microsPerDay + 1) / microsPerDay)
    }

    /// The local hour of week, 0 = Monday 00:00–01:00 … 167 = Sunday 23:00–24:00.
    @inline(__always)
    package static func hourOfWeek(time: Double, utcOffsetSeconds: Int32) -> Int {
        let local = time + Double(utcOffsetSeconds)
        let day = Int((local / 86_400).rounded(.down))
        let hour = Int(((local - Double(day) * 86_400) / 3_600).rounded(.down))
        return CivilDate.weekday(days: day) * 24 + min(max(hour, 0), 23)
    }

    /// The local hour of day, 0–23.
    @inline(__always)
    package static func hourOfDay(time: Double, utcOffsetSeconds: Int32) -> Int {
        hourOfWeek(time: time, utcOffsetSeconds: utcOffsetSeconds) % 24
    }

    /// The UTC instant (Unix seconds) at which a local day starts.
    @inline(__always)
    package static func startOfDay(_ day: Int, utcOffsetSeconds: Int32) -> Double {
        Double(day) * 86_400 - Double(utcOffsetSeconds)
    }
}
