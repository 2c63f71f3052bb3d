import CallAPIServerCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`): every connection takes one.
public enum DescriptorLimit {
    /// The soft and hard limits now, or nil when they cannot be read.
    public static var current: (soft: Int, hard: Int)? {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        return (clamped(limit.rlim_cur), clamped(limit.rlim_max))
    }

    /// Raises the soft limit to the hard one, as Go's runtime does at start (the soft default, often 1024, is far
    /// below what a server with thousands of connections needs). Returns the soft limit before and after, or nil
    /// when the limits cannot be read; a refused raise leaves it where it was.
    @discardableResult
    public static func raiseSoftLimit() -> (before: Int, after: Int, hard: Int)? {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        let before = clamped(limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before, clamped(limit.rlim_max)) }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        #if canImport(Darwin)
            // Darwin refuses a soft limit over OPEN_MAX, whatever the hard one says.
            raised.rlim_cur = min(raised.rlim_cur, rlim_t(OPEN_MAX))
        #endif
        guard setrlimit(resourceNumber, &raised) == 0 else { return (before, before, clamped(limit.rlim_max)) }
        return (before, clamped(raised.rlim_cur), clamped(limit.rlim_max))
    }

    private static func clamped(_ value: rlim_t) -> Int { value > rlim_t(Int.max) ? Int.max : Int(value) }

    #if canImport(Glibc)
        private static let resourceNumber = __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue))
    #else
        private static let resourceNumber = RLIMIT_NOFILE
    #endif
}
