import Synchronization

/// Folds the events ingested into the saved model a short while after an ingest, one fold for
/// a burst of ingests: an ingest that finds a fold already scheduled leaves its events to that
/// one (a fold takes every event committed by the time it runs). Under a steady stream of
/// small `POST`s the writer then rewrites the population's sums (megabytes) a few times a
/// second instead of once a request; plans in between stay exact (a device with events newer
/// than the saved fold is brought up to date in memory, see `ModelRepository`).
final class FoldScheduler: Sendable {
    private let scheduled = Atomic<Bool>(false)
    /// How long a fold waits after the ingest that scheduled it.
    let delay: Duration

    /// Creates a scheduler.
    /// - Parameter delay: How long a fold waits for more ingests to join it.
    init(delay: Duration = .milliseconds(250)) {
        self.delay = delay
    }

    /// Schedules `fold` unless one is already waiting.
    func schedule(_ fold: @escaping @Sendable () async -> Void) {
        guard scheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        Task {
            try? await Task.sleep(for: delay)
            // Cleared before the fold reads the store: an ingest committed from here on
            // schedules the next one.
            scheduled.store(false, ordering: .releasing)
            await fold()
        }
    }
}
