import CallAPIServerCore
import CallAPISignalProtocol

/// Reads a ``CallQuery`` from text parameters (the admin endpoint's query string), with a clear error for each bad
/// one.
enum CallQueryParameters {
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// `outcome` is a comma-separated list of ``CallOutcome`` values; `role` is `callee` or absent; times are ms
    /// since 1970; `limit` 1...``CallQuery/maxLimit``; `cursor` from a previous page.
    static func query(userId: String, _ parameters: [String: String]) throws -> CallQuery {
        func time(_ name: String) throws -> Int64? {
            guard let text = parameters[name] else { return nil }
            guard let value = Int64(text), value >= 0 else {
                throw Invalid(description: "\"\(name)\" must be milliseconds since 1970, not \"\(text)\"")
            }
            return value
        }
        var outcomes: [CallOutcome] = []
        if let list = parameters["outcome"], !list.isEmpty {
            for name in list.split(separator: ",") {
                guard let outcome = CallOutcome(rawValue: String(name)) else {
                    let known = CallOutcome.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Invalid(description: "\"outcome\" \"\(name)\" is not one of \(known)")
                }
                outcomes.append(outcome)
            }
        }
        var asCallee = false
        switch parameters["role"] {
        case nil, "any": break
        case "callee": asCallee = true
        case let other?: throw Invalid(description: "\"role\" must be \"callee\" or \"any\", not \"\(other)\"")
        }
        var limit = 50
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...CallQuery.maxLimit).contains(value) else {
                throw Invalid(description: "\"limit\" must be 1 to \(CallQuery.maxLimit), not \"\(text)\"")
            }
            limit = value
        }
        var cursor: CallCursor?
        if let text = parameters["cursor"] {
            guard let value = CallCursor(text) else {
                throw Invalid(description: "\"cursor\" \"\(text)\" is not one this server gave (nextCursor)")
            }
            cursor = value
        }
        return CallQuery(
            userId: userId, outcomes: outcomes, asCalleeOnly: asCallee, since: try time("since"),
            until: try time("until"), limit: limit, cursor: cursor)
    }
}
