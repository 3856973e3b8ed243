extension DeviceModel {
    /// About how many bytes the model holds in memory: its hour-of-week and bin arrays, per app
    /// and for the device, and its pair and recent-launch tables. What a bounded cache of models
    /// (or of schedulers, which hold one) counts against its capacity.
    /// - Complexity: O(1).
    package var approximateBytes: Int {
        let week = HourOfWeek.count * MemoryLayout<Double>.stride
        let device = 2 * week + (GapBins.count + 4 * ResponseBins.count) * MemoryLayout<Double>.stride
        let app = week + (GapBins.count + 4 * ResponseBins.count) * MemoryLayout<Double>.stride + 128
        let perContent = 2 * week + 64
        return 1024 + device + apps.count * app + content.count * perContent + triggerTrials.count * 32
            + pairSuccesses.count * 32 + recent.count * MemoryLayout<RecentLaunch>.stride
    }
}
