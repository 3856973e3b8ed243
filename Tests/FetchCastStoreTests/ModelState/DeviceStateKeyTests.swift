import FetchCastStore
import Testing

/// Which device a model-state key belongs to: `name:<id>` or `name:<id>:…`, the id in plain
/// decimal; anything else is the fleet's.
struct DeviceStateKeyTests {
    @Test(arguments: [
        ("device:3", 3), ("prior:12", 12), ("epoch-device:7", 7), ("scheduler:42:9f3a", 42), ("plans:1:abc:def", 1),
        ("x:999999999999999999", 999_999_999_999_999_999),
    ] as [(String, Int64)])
    func aDevicesKeyNamesIt(key: String, device: Int64) {
        #expect(DeviceStateKey.device(of: key) == device)
    }

    @Test(arguments: [
        "population", "epoch", "epoch-population", "warmed-current-5", "watermark", "", ":3", "device:", "device::3",
        "device:03", "device:0", "device:-3", "device:+3", "device:3a", "device: 3", "device:1234567890123456789", "plan;",
    ])
    func anyOtherKeyIsTheFleets(key: String) {
        #expect(DeviceStateKey.device(of: key) == nil)
    }

    @Test func aPrefixNamesOneDeviceOnlyWhenItsIDIsClosed() {
        #expect(DeviceStateKey.device(ofPrefix: "plans:3:") == 3)
        #expect(DeviceStateKey.device(ofPrefix: "plans:3") == nil, "plans:30:… starts with it too")
        #expect(DeviceStateKey.device(ofPrefix: "plans:") == nil)
        #expect(DeviceStateKey.device(ofPrefix: "plans") == nil)
    }
}
