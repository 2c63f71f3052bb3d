/// A device's push credentials, as a logged-in client registers them (`register_device`).
public struct PushDevice: Codable, Sendable, Equatable {
    /// Which push service delivers to the device.
    public enum Platform: String, Codable, Sendable, Equatable, CaseIterable {
        /// Apple Push Notification service.
        case apns
        /// Firebase Cloud Messaging (HTTP v1).
        case fcm
    }

    /// What kind of push the device wants for a call.
    public enum Kind: String, Codable, Sendable, Equatable, CaseIterable {
        /// A VoIP push (APNs) or high-priority data message (FCM) that the app reports to its system call screen.
        case voip
        /// An ordinary notification with a ringtone, for apps that cannot use CallKit (mainland China).
        case alert
    }

    /// Which APNs environment issued the token.
    public enum Environment: String, Codable, Sendable, Equatable, CaseIterable {
        case sandbox
        case production
    }

    /// A stable id of the device, chosen by the app; registering the same id again replaces its entry.
    public var deviceId: String
    public var platform: Platform
    public var kind: Kind
    /// The provider's device token (APNs: hex; FCM: the registration token). Never logged.
    public var token: String
    /// The app's bundle id (APNs; VoIP pushes go to `<topic>.voip`). Not used for FCM.
    public var topic: String?
    /// The APNs environment; not used for FCM.
    public var environment: Environment?

    public init(
        deviceId: String, platform: Platform, kind: Kind, token: String, topic: String? = nil,
        environment: Environment? = nil
    ) {
        self.deviceId = deviceId
        self.platform = platform
        self.kind = kind
        self.token = token
        self.topic = topic
        self.environment = environment
    }

    /// The longest device id, in characters.
    public static let maxDeviceIdLength = 128
    /// The longest token, in bytes.
    public static let maxTokenBytes = 4096
    /// The longest topic, in characters.
    public static let maxTopicLength = 255

    /// Why `deviceId` cannot name a device (here, or in a `login`), or nil when it can.
    public static func deviceIdProblem(_ deviceId: String, field: String = "deviceId") -> String? {
        let idAllowed = deviceId.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
                UInt8(ascii: ":"):
                true
            default: false
            }
        }
        guard !deviceId.isEmpty, deviceId.utf8.count <= maxDeviceIdLength, idAllowed else {
            return "\"\(field)\" must be 1-\(maxDeviceIdLength) characters of A-Z a-z 0-9 . _ - :"
        }
        return nil
    }

    /// Why these credentials cannot be used, or nil when they can.
    public var problem: String? {
        if let problem = Self.deviceIdProblem(deviceId) { return problem }
        guard !token.isEmpty, token.utf8.count <= Self.maxTokenBytes,
            token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            return "\"token\" must be 1-\(Self.maxTokenBytes) printable ASCII characters without spaces"
        }
        if let topic, topic.isEmpty || topic.utf8.count > Self.maxTopicLength || topic.contains(" ") {
            return "\"topic\" must be 1-\(Self.maxTopicLength) characters without spaces"
        }
        switch platform {
        case .apns:
            guard token.utf8.allSatisfy({ $0.isHexDigit }), token.utf8.count % 2 == 0 else {
                return "an APNs \"token\" is hexadecimal (the device token's bytes)"
            }
            guard topic != nil else { return "an APNs device needs a \"topic\": the app's bundle id" }
            guard environment != nil else { return "an APNs device needs \"environment\": sandbox or production" }
        case .fcm:
            break
        }
        return nil
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }
}

/// A registered device as the server lists it: everything but the token.
public struct PushDeviceSummary: Codable, Sendable, Equatable {
    public var deviceId: String
    public var platform: PushDevice.Platform
    public var kind: PushDevice.Kind
    public var topic: String?
    public var environment: PushDevice.Environment?
    /// When it was (last) registered, milliseconds since 1970 (server clock).
    public var registeredAt: Int64

    public init(
        deviceId: String, platform: PushDevice.Platform, kind: PushDevice.Kind, topic: String?,
        environment: PushDevice.Environment?, registeredAt: Int64
    ) {
        self.deviceId = deviceId
        self.platform = platform
        self.kind = kind
        self.topic = topic
        self.environment = environment
        self.registeredAt = registeredAt
    }
}
