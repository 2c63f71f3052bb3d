import CallAPITesting

/// How the demo lets time pass: really (the command) or on a manual clock (its tests).
protocol DemoPacer: Sendable {
    /// Lets `millis` milliseconds pass.
    func pass(millis: Int64) async
}

/// Real time.
struct SleepingPacer: DemoPacer {
    func pass(millis: Int64) async {
        try? await Task.sleep(for: .milliseconds(millis))
    }
}

/// Virtual time: advances the manual clock the demo's doubles run on.
struct ManualPacer: DemoPacer {
    let clock: ManualClock
    func pass(millis: Int64) async { clock.advance(byMillis: millis) }
}
