import FetchCastCore
@testable import FetchCastPostgres
import NIOCore
import Testing

/// The `COPY … FROM STDIN` text an append streams: one exact row per event shape.
struct CopyTextTests {
    private func row(_ e: EncodedEvent, device: Int64, file: Int64 = 7, app: Int64) -> String {
        var buffer = ByteBuffer()
        CopyText.appendEvent(e, device: device, file: file, app: app, to: &buffer)
        return String(buffer: buffer)
    }

    @Test func launchRow() {
        let e = EncodedEvent(timeMicros: 1_700_000_000_000_000, utcOffsetSeconds: -18_000, device: 0, app: 1, kind: .launch,
                             durationMs: 421_495, line: 3)
        #expect(row(e, device: 4_166_181_804_380_531_676, app: 333_818_180_241_835_728)
            == "4166181804380531676\t7\t3\t1700000000000000\t-18000\t333818180241835728\t0\t\\N\t\\N\t421495\t\\N\t\\N\t\\N\t\\N\n")
    }

    @Test func fetchRowAtTheEdgesOfInt64() {
        let e = EncodedEvent(timeMicros: Int64.min, utcOffsetSeconds: 0, device: 0, app: 1, kind: .fetch, result: .failed, bytes: 0,
                             durationMs: Int64.max, line: 1)
        #expect(row(e, device: Int64.max, file: 0, app: Int64.min)
            == "9223372036854775807\t0\t1\t-9223372036854775808\t0\t-9223372036854775808\t1\t2\t0\t9223372036854775807\t\\N\t\\N\t\\N\t\\N\n")
    }

    @Test func stateRowCarriesItsConditionsOnly() {
        let e = EncodedEvent(timeMicros: 10, utcOffsetSeconds: 3600, device: 0, app: 0, kind: .state, line: 9,
                             conditions: ConditionChange(network: .cellular, power: nil, battery: 100, lowPower: false))
        #expect(row(e, device: 5, app: 6) == "5\t7\t9\t10\t3600\t6\t3\t\\N\t\\N\t\\N\t1\t\\N\t100\t0\n")
    }

    @Test func rowsFollowOneAnother() {
        var buffer = ByteBuffer()
        CopyText.appendRow([1, -20, 0], to: &buffer)
        CopyText.appendRow([Int64.min], to: &buffer)
        #expect(String(buffer: buffer) == "1\t-20\t0\n-9223372036854775808\n")
    }
}
