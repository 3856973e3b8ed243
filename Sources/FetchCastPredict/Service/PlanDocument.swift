/// The answer of `GET /v1/devices/{device}/plan`: the device, where its plan starts and the
/// fetches ``FetchCastService/plan(_:)`` planned (`fetchcast predict --device D`'s records).
package struct PlanDocument: Sendable, Hashable, Codable {
    /// The device, as asked.
    package var device: String
    /// Where the plan starts (Unix seconds): the request's `at`, or the server's clock.
    package var atUnix: Double
    /// The planned fetches, earliest first.
    package var fetches: [Prediction]

    /// Creates a plan document.
    package init(device: String, atUnix: Double, fetches: [Prediction]) {
        self.device = device
        self.atUnix = atUnix
        self.fetches = fetches
    }

    enum CodingKeys: String, CodingKey {
        case device, fetches
        case atUnix = "at_unix"
    }
}
