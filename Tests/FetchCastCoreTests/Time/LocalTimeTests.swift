import Testing
import FetchCastCore

struct LocalTimeTests {
    // 2013-11-09T22:36:45Z, a Saturday.
    static let time = 1_384_036_605.0

    @Test func placesAnInstantOnTheLocalClock() {
        #expect(LocalTime.day(time: Self.time, utcOffsetSeconds: 0) == 16_018)
        // Two hours east it is already Sunday 00:36.
        #expect(LocalTime.day(time: Self.time, utcOffsetSeconds: 7200) == 16_019)
        #expect(LocalTime.hourOfDay(time: Self.time, utcOffsetSeconds: 7200) == 0)
        #expect(LocalTime.hourOfWeek(time: Self.time, utcOffsetSeconds: 7200) == 6 * 24)
        #expect(LocalTime.hourOfWeek(time: Self.time, utcOffsetSeconds: 0) == 5 * 24 + 22)
        #expect(LocalTime.day(micros: Int64(Self.time) * 1_000_000, utcOffsetSeconds: 7200) == 16_019)
    }

    @Test func floorsDaysBeforeTheEpoch() {
        #expect(LocalTime.day(micros: -1, utcOffsetSeconds: 0) == -1)
        #expect(LocalTime.day(micros: 0, utcOffsetSeconds: -1) == -1)
        #expect(LocalTime.day(time: -0.5, utcOffsetSeconds: 0) == -1)
        #expect(LocalTime.startOfDay(16_019, utcOffsetSeconds: 7200) == 16_019 * 86_400 - 7200)
    }
}
