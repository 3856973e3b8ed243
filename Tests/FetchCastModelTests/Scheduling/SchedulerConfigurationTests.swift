import FetchCastModel
import Testing

struct SchedulerConfigurationTests {
    /// `predict --budget inf` trapped here ("Double value cannot be converted to Int").
    @Test(arguments: [Double.infinity, 1e19, 0x1p63, 1e300])
    func aBudgetPastIntDoesNotTrap(budget: Double) {
        #expect(SchedulerConfiguration(budget: budget).dailyCap == Int.max)
        let context = DeviceContext(apps: [0, 1], budget: budget, tau: 1800)
        #expect(context.dailyCap == Int.max)
        #expect(context.appDailyCap >= Int(saturating: budget / 2 - 1e6))
    }

    @Test func theCapIsTheBudgetsWholePart() {
        #expect(SchedulerConfiguration(budget: 24.9).dailyCap == 24)
        #expect(SchedulerConfiguration(budget: 1440).dailyCap == 1440)
    }
}
