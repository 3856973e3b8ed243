/// Which device a model-state key belongs to, if any.
///
/// A key `name:<id>` or `name:<id>:…` (a non-empty name without a colon, then a device id in
/// decimal: no sign, no leading zero, at most 18 digits) belongs to device `id`. The model
/// layer keys every state of one device so (`device:3`, `prior:3`, `scheduler:3:…`,
/// `plans:3:…`) and its fleet-wide states without a colon (`population`, `epoch`), so an
/// engine may keep a device's states beside its events: on PostgreSQL, in `device_state`, keyed
/// (and sharded) by the device, as its events are.
package enum DeviceStateKey {
    /// The device `key` belongs to; `nil` for a key of the whole fleet.
    package static func device(of key: String) -> Int64? {
        parse(key)?.device
    }

    /// The one device every key starting with `prefix` belongs to: a prefix `name:<id>:`
    /// (`plans:3:`); `nil` when keys of several devices, or of the fleet, may start with it.
    package static func device(ofPrefix prefix: String) -> Int64? {
        guard let (device, end) = parse(prefix), end < prefix.utf8.endIndex else { return nil }
        return device
    }

    /// The device and where its digits end (the end of the key, or the colon after them).
    private static func parse(_ key: String) -> (device: Int64, end: String.UTF8View.Index)? {
        let bytes = key.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon != bytes.startIndex else { return nil }
        var i = bytes.index(after: colon)
        var value: Int64 = 0
        var digits = 0
        while i != bytes.endIndex, bytes[i] != UInt8(ascii: ":") {
            let byte = bytes[i]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18, digits > 0 || byte != UInt8(ascii: "0") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            digits += 1
            i = bytes.index(after: i)
        }
        return digits > 0 ? (value, i) : nil
    }
}
