import CallAPIServerCore
import CallAPISignalProtocol
import Hummingbird

/// The operator's push device endpoints, with the admin key:
///
/// - `GET /v1/users/{user}/devices` → `{"userId":"1002","devices":[{"deviceId":"…","platform":"apns",…}]}`
///   (tokens are never shown)
/// - `DELETE /v1/users/{user}/devices/{deviceId}` → `{"removed":true}` (false when there was no such device)
struct DeviceAdminEndpoint: Sendable {
    let hub: SignalHub
    let authorization: AdminAuthorization

    struct Devices: ResponseEncodable {
        var userId: String
        var devices: [PushDeviceSummary]
    }

    struct Removed: ResponseEncodable {
        var removed: Bool
    }

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/users/:user/devices") { request, context -> Devices in
            try authorization.check(request, endpoint: "the device endpoint")
            let user = try userParameter(context)
            let devices = hub.devices.devices(of: user).map(\.summary)
            return Devices(userId: user, devices: devices)
        }
        router.delete("/v1/users/:user/devices/:device") { request, context -> Removed in
            try authorization.check(request, endpoint: "the device endpoint")
            let user = try userParameter(context)
            guard let device = context.parameters.get("device"), !device.isEmpty,
                device.count <= PushDevice.maxDeviceIdLength
            else {
                throw HTTPError(
                    .badRequest, message: "the device id must be 1-\(PushDevice.maxDeviceIdLength) characters")
            }
            let removed = hub.removeDevice(device, of: user)
            return Removed(removed: removed)
        }
    }

    private func userParameter(_ context: BasicRequestContext) throws -> String {
        guard let user = context.parameters.get("user"), SignalProtocol.isValidUserId(user) else {
            throw HTTPError(.badRequest, message: "the user id must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        return user
    }
}
