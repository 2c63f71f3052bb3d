/// Severity of a message passed to ``CallApiListenerProtocol/callDebugInfo(message:logLevel:)``.
public enum CallLogLevel: Int, Sendable, CaseIterable, Comparable {
    case normal = 0
    case warning = 1
    case error = 2

    public static func < (lhs: CallLogLevel, rhs: CallLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
