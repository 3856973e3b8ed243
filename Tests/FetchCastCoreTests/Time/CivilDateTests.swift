import Testing
import FetchCastCore

struct CivilDateTests {
    /// (date, day number, ISO weekday Monday = 0), from `date -u -d DATE +%s` and `+%u`.
    static let known: [(Int, Int, Int, Int, Int)] = [
        (1970, 1, 1, 0, 3),
        (1969, 12, 31, -1, 2),
        (1999, 12, 31, 10_956, 4),
        (2000, 3, 1, 11_017, 2),
        (2013, 11, 9, 16_018, 5),
        (2016, 2, 29, 16_860, 0),
        (2100, 3, 1, 47_541, 0),
        (1900, 1, 1, -25_567, 0),
        (1, 1, 1, -719_162, 0),
        (9999, 12, 31, 2_932_896, 4),
    ]

    @Test(arguments: known)
    func convertsKnownDates(date: (Int, Int, Int, Int, Int)) {
        let (year, month, day, number, weekday) = date
        #expect(CivilDate.days(year: year, month: month, day: day) == number)
        let back = CivilDate.date(days: number)
        #expect(back.year == year && back.month == month && back.day == day)
        #expect(CivilDate.weekday(days: number) == weekday)
    }

    @Test func dayNumbersAreConsecutiveAcrossEveryDay() {
        // Every day from 1899 to 2101 follows the one before: no gaps at month, year or century ends.
        var expected = CivilDate.days(year: 1899, month: 1, day: 1)
        for year in 1899...2101 {
            for month in 1...12 {
                for day in 1...CivilDate.daysInMonth(year: year, month: month) {
                    #expect(CivilDate.days(year: year, month: month, day: day) == expected)
                    expected += 1
                }
            }
        }
        #expect(expected == CivilDate.days(year: 2102, month: 1, day: 1))
    }

    @Test(arguments: [
        (2000, 2, 29), (1900, 2, 28), (2100, 2, 28), (2016, 2, 29), (2013, 2, 28),
        (2013, 1, 31), (2013, 4, 30), (2013, 6, 30), (2013, 9, 30), (2013, 11, 30), (2013, 12, 31),
    ])
    func knowsMonthLengths(year: Int, month: Int, days: Int) {
        #expect(CivilDate.daysInMonth(year: year, month: month) == days)
    }
}
