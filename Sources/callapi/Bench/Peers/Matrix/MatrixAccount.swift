/// A Matrix user the bench logged in as.
struct MatrixAccount: Sendable, Equatable {
    /// `@u<decimal id>:<server name>`.
    var userId: String
    var accessToken: String
    var deviceId: String

    /// The Matrix user id of a bench user (a decimal id; Synapse reserves all-numeric local parts for guests).
    static func matrixId(of user: String, serverName: String) -> String { "@u\(user):\(serverName)" }

    /// The bench user (decimal id) behind a Matrix user id made by ``matrixId(of:serverName:)``.
    static func benchUser(of matrixId: String) -> String? {
        guard matrixId.hasPrefix("@u"), let colon = matrixId.firstIndex(of: ":") else { return nil }
        let user = matrixId[matrixId.index(matrixId.startIndex, offsetBy: 2)..<colon]
        return !user.isEmpty && user.allSatisfy(\.isASCII) && user.allSatisfy(\.isNumber) ? String(user) : nil
    }

    var serverName: String {
        userId.firstIndex(of: ":").map { String(userId[userId.index(after: $0)...]) } ?? "localhost"
    }
}
