/// A Matrix user logged in on one device: what ``MatrixSignalClient/login(account:since:tokenExpiresAt:)``
/// needs. CallAPI users (decimal ids) are Matrix users `@u<id>:<server name>`.
public struct MatrixAccount: Sendable, Equatable {
    /// `@u<decimal id>:<server name>`.
    public var userId: String
    public var accessToken: String
    public var deviceId: String

    public init(userId: String, accessToken: String, deviceId: String) {
        self.userId = userId
        self.accessToken = accessToken
        self.deviceId = deviceId
    }

    /// The Matrix user id of a CallAPI user (a decimal id; Synapse reserves all-numeric local parts for
    /// guests, hence the `u`).
    public static func matrixId(of user: String, serverName: String) -> String { "@u\(user):\(serverName)" }

    /// The CallAPI user (decimal id) behind a Matrix user id made by ``matrixId(of:serverName:)``, or nil for
    /// any other Matrix user.
    public static func callUser(of matrixId: String) -> String? {
        guard matrixId.hasPrefix("@u"), let colon = matrixId.firstIndex(of: ":") else { return nil }
        let user = matrixId[matrixId.index(matrixId.startIndex, offsetBy: 2)..<colon]
        return !user.isEmpty && user.allSatisfy(\.isASCII) && user.allSatisfy(\.isNumber) ? String(user) : nil
    }

    /// The part of ``userId`` after the first colon.
    public var serverName: String {
        userId.firstIndex(of: ":").map { String(userId[userId.index(after: $0)...]) } ?? "localhost"
    }
}
