import AsyncHTTPClient
import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOCore
import NIOSSL

/// Builds the push side of a server from its ``PushConfiguration``: the stored registry, the HTTP client and
/// the providers.
struct PushSetup: Sendable {
    let registry: DeviceRegistry
    let service: PushService
    /// The providers' HTTP client, shut down with the server (nil when no provider is configured).
    let client: HTTPClient?

    static func make(
        _ configuration: PushConfiguration, clock: any SignalServerClock, metrics: ServerMetrics, logger: Logger
    ) async throws -> PushSetup {
        let store = configuration.devicesFile.map(DeviceStore.init(path:))
        let registry = try store?.load() ?? DeviceRegistry()
        if store == nil {
            logger.notice("push devices are kept in memory only; give --data-dir to keep them across restarts")
        }
        var client: HTTPClient?
        var providers: [PushDevice.Platform: any PushProvider] = [:]
        if configuration.apns != nil || configuration.fcm != nil {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let pem = configuration.trustedRootPEM {
                let roots = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
                tls.additionalTrustRoots = [.certificates(roots)]
            }
            var httpConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
            httpConfiguration.httpVersion = .automatic
            httpConfiguration.timeout = .init(connect: .seconds(5), read: .seconds(10))
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)
            client = http
            do {
                if let apns = configuration.apns {
                    providers[.apns] = try await APNsProvider(
                        settings: apns, client: http, clock: clock, logger: logger)
                }
                if let fcm = configuration.fcm {
                    providers[.fcm] = try await FCMProvider(settings: fcm, client: http, clock: clock, logger: logger)
                }
            } catch {
                try? await http.shutdown()
                throw error
            }
        }
        let service = PushService(
            providers: providers, store: store, clock: clock, metrics: metrics, logger: logger)
        return PushSetup(registry: registry, service: service, client: client)
    }
}
