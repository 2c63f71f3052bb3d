import Foundation
import Testing

/// The real servers the adapter tests run against, found through the environment `.ci/run` sets
/// (scripts/services starts them); a suite whose server is absent is disabled with the reason.
enum AdapterServices {
    static let environment = ProcessInfo.processInfo.environment

    /// `mqtt://127.0.0.1:PORT` of a running Mosquitto.
    static let mqttURL = environment["CALLAPI_TEST_MQTT_URL"].flatMap { $0.isEmpty ? nil : $0 }
    /// The mosquitto binary, for tests that start (and restart) a broker of their own.
    static let mosquittoBinary = environment["CALLAPI_TEST_MOSQUITTO"].flatMap {
        FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil
    }
    /// `http://127.0.0.1:PORT` of a running Synapse and its registration shared secret.
    static let synapseURL = environment["CALLAPI_TEST_SYNAPSE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let synapseSecret = environment["CALLAPI_TEST_SYNAPSE_SECRET"].flatMap { $0.isEmpty ? nil : $0 }

    static let noMQTT: Comment = "needs a broker: CALLAPI_TEST_MQTT_URL (set by .ci/run)"
    static let noMosquitto: Comment =
        "needs the mosquitto binary: CALLAPI_TEST_MOSQUITTO (set by .ci/run)"
    static let noSynapse: Comment =
        "needs a homeserver: CALLAPI_TEST_SYNAPSE_URL and CALLAPI_TEST_SYNAPSE_SECRET (set by .ci/run)"

    /// Distinct user ids per test, so tests sharing one broker or homeserver never see each other's messages.
    static func users(_ count: Int) -> [UInt] {
        let base = UInt(UInt32.random(in: 100_000...4_000_000_000)) * 10
        return (0..<UInt(count)).map { base + $0 }
    }
}
