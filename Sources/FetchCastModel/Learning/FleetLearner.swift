/// Folds the events of a fleet of devices into one ``DeviceModel`` per device and pools the
/// models into ``PopulationSums``: the one fold behind the store's models (`predict`, `serve`) and
/// `evaluate --prior-from`.
///
/// Events come in the order they happened to be recorded (a trace, the store's id order). An
/// event of one device goes to that device's model; a publish to every device (no device) goes
/// to ``everyone`` and to every model held, so that a device first seen later still adopts the
/// content published before it (``DeviceModel/adoptContent(from:)``).
///
/// A fold may be split: a learner started from a model's saved state and the saved ``everyone``
/// and fed the events after them ends in the same state, bit for bit, as one fed everything.
/// Devices may be folded in batches, each with its own learner started from the same
/// ``everyone``: each batch then re-reads the publishes to every device, and every model sees
/// the same events in the same order as in one learner.
///
/// - Complexity: ``observe(_:device:)`` is O(1) amortised for a device's event and O(models
///   held) for a publish to every device.
package struct FleetLearner<Device: Hashable & Sendable>: Sendable {
    /// The model constants of every device.
    package let configuration: ModelConfiguration
    /// What was published to every device so far.
    package private(set) var everyone: DeviceModel
    /// The models held, by device.
    package var models: [Device: DeviceModel]
    /// The contributions pooled so far (``pool(_:name:)``).
    package private(set) var population: PopulationSums

    /// Creates a learner.
    /// - Parameters:
    ///   - configuration: The model constants.
    ///   - everyone: The publishes to every device folded before (none when `nil`).
    ///   - models: Saved models to go on from.
    ///   - population: Sums pooled before.
    package init(
        configuration: ModelConfiguration = ModelConfiguration(), everyone: DeviceModel? = nil, models: [Device: DeviceModel] = [:],
        population: PopulationSums = PopulationSums()
    ) {
        self.configuration = configuration
        self.everyone = everyone ?? DeviceModel(configuration: configuration)
        self.models = models
        self.population = population
    }

    /// Learns from one event of `device`, or of every device when `device` is `nil`.
    package mutating func observe(_ event: DeviceEvent, device: Device?) {
        guard let device else {
            everyone.observe(event)
            var i = models.startIndex
            while i != models.endIndex {
                models.values[i].observe(event)
                i = models.index(after: i)
            }
            return
        }
        if models[device] == nil {
            var fresh = DeviceModel(configuration: configuration)
            fresh.adoptContent(from: everyone)
            models[device] = fresh
        }
        models[device]!.observe(event)
    }

    /// Adds the contribution of a device's model to ``population``.
    /// - Parameters:
    ///   - device: A device with a model.
    ///   - name: The name of each of its app ids (the population pools apps by name).
    /// - Returns: The contribution added (`nil`, and nothing added, when the device has no model).
    /// - Complexity: O(the device's apps × 168 + pairs).
    @discardableResult
    package mutating func pool(_ device: Device, name: (Int32) -> String) -> PopulationSums? {
        guard let model = models[device] else { return nil }
        let own = PopulationSums(model: model, name: name)
        population.add(own)
        return own
    }

    /// Takes a contribution pooled before out of ``population`` again (a device's state before
    /// new events, about to be pooled anew). Exact: the sums are those of the other devices.
    package mutating func unpool(_ contribution: PopulationSums) {
        population.remove(contribution)
    }
}
