/// Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01).
///
/// The algorithms are Howard Hinnant's `days_from_civil` / `civil_from_days`
/// (<https://howardhinnant.github.io/date_algorithms.html>): exact for every year, no tables.
package enum CivilDate {
    /// The day number of a calendar date.
    @inline(__always)
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The calendar date of a day number.
    package static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Days in a month of a year.
    @inline(__always)
    package static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Day of week of a day number, Monday = 0 … Sunday = 6 (ISO 8601 order).
    @inline(__always)
    package static func weekday(days: Int) -> Int {
        // 1970-01-01 was a Thursday (3).
        let w = (days + 3) % 7
        return w < 0 ? w + 7 : w
    }
}
