import FetchCastPredict

/// The answer of `GET /v1/devices/{device}/plan`: the device, where its plan starts and the
/// fetches ``FetchCastService/plan(_:on:)`` planned (`fetchcast predict --device D`'s records).
package struct PlanDocument: Sendable, Hashable, Codable {
    /// The device, as asked.
    package var device: String
    /// Where the plan starts (Unix seconds): the request's `at`, or the server's clock.
    package var atUnix: Double
    /// The planned fetches, earliest first.
    package var fetches: [Prediction]
    /// Why no fetch is planned (``EmptyPlanNote``), when `fetches` is empty; absent otherwise.
    package var note: String?

    /// Creates a plan document.
    package init(device: String, atUnix: Double, fetches: [Prediction], note: String? = nil) {
        self.device = device
        self.atUnix = atUnix
        self.fetches = fetches
        self.note = note
    }

    enum CodingKeys: String, CodingKey {
        case device, fetches, note
        case atUnix = "at_unix"
    }
}
