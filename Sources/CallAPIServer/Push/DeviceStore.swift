import CallAPIServerCore
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Keeps the ``DeviceRegistry`` in a JSON file, so that registrations survive a restart.
///
/// Each save writes a temporary file beside the store and renames it over the store: a crash leaves the old or
/// the new registry, never half of one. Saves are whole files: the registry is small (at most
/// ``DeviceRegistry/maxDevicesPerUser`` devices per user).
public struct DeviceStore: Sendable {
    /// The file's path.
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The file's format version.
    static let version = 1

    private struct File: Codable {
        var version: Int
        var registry: DeviceRegistry
    }

    /// What the store says a problem is.
    public struct StoreError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The stored registry; an empty one when the file does not exist yet.
    public func load() throws(StoreError) -> DeviceRegistry {
        guard FileManager.default.fileExists(atPath: path) else { return DeviceRegistry() }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw StoreError(description: "cannot read the device store \(path): \(error)")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw StoreError(description: "the device store \(path) is not a device registry: \(error)")
        }
        guard file.version == Self.version else {
            throw StoreError(description: "the device store \(path) has version \(file.version), not \(Self.version)")
        }
        return file.registry
    }

    /// Writes `registry` atomically (temporary file, then rename), creating the directory if needed.
    public func save(_ registry: DeviceRegistry) throws(StoreError) {
        let url = URL(fileURLWithPath: path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let data = try encoder.encode(File(version: Self.version, registry: registry))
            // `.atomic` writes a temporary file in the same directory and renames it over the store.
            try data.write(to: url, options: .atomic)
        } catch {
            throw StoreError(description: "cannot write the device store \(path): \(error)")
        }
    }
}
