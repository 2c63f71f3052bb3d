import CallAPIServerCore
/// The server's push set-up: providers, where registrations are kept, and the hold/withdraw policy.
public struct PushConfiguration: Sendable, Equatable {
    /// Ring time and tombstones.
    public var policy = PushPolicy()
    /// The JSON file that keeps device registrations across restarts; nil keeps them in memory only.
    public var devicesFile: String?
    /// APNs credentials and endpoints; nil: APNs devices can register but are not pushed to.
    public var apns: APNsSettings?
    /// FCM credentials and endpoints; nil: FCM devices can register but are not pushed to.
    public var fcm: FCMSettings?
    /// An extra trusted root certificate (PEM) for the providers' endpoints: the local push mock's.
    public var trustedRootPEM: String?

    public init() {}

    /// The devices file inside a data directory.
    public static func devicesFile(inDataDirectory directory: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + "devices.json"
    }
}
