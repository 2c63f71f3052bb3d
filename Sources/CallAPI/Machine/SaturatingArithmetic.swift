// Arithmetic on values that come from outside (message timestamps, the channel's receive times, the app's
// timeouts): pinned to Int64's range instead of trapping on overflow.
extension Int64 {
    /// `self - other`, or `Int64.min`/`Int64.max` when the difference does not fit.
    func saturatingMinus(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other < 0 ? .max : .min
    }

    /// `self + other`, or `Int64.min`/`Int64.max` when the sum does not fit.
    func saturatingPlus(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other < 0 ? .min : .max
    }
}
