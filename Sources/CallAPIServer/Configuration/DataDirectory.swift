import CallAPIServerCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The folder of the server's files (the ledger's SQLite database; with `--data-dir`, the push device
/// registrations), and how it was chosen, which the start-up banner says (docs/ledger.md, "Where the files are").
public struct DataDirectory: Sendable, Equatable {
    /// How the folder was chosen.
    public enum Origin: Sendable, Equatable {
        /// `--data-dir` (or `CALLAPI_DATA_DIR`).
        case flag
        /// A development server (the public secret) started without `--data-dir`: the folder it was started in.
        case currentFolder
        /// A production server started without `--data-dir`: the platform's data folder for `callapi`
        /// (`$XDG_DATA_HOME/callapi`, else `~/.local/share/callapi`; on macOS `~/Library/Application Support/callapi`).
        case platformDefault
    }

    /// The folder, as an absolute path when it was not given.
    public var path: String
    public var origin: Origin

    public init(path: String, origin: Origin) {
        self.path = path
        self.origin = origin
    }

    /// The folder of a server given `flag` (`--data-dir`), in development mode or not, in `environment`.
    static func choose(flag: String?, development: Bool, environment: [String: String]) -> DataDirectory {
        if let flag { return DataDirectory(path: flag, origin: .flag) }
        if development {
            return DataDirectory(path: FileManager.default.currentDirectoryPath, origin: .currentFolder)
        }
        // The XDG base directory rule: $XDG_DATA_HOME if it is an absolute path, else ~/.local/share.
        if let base = environment["XDG_DATA_HOME"], base.hasPrefix("/") {
            return DataDirectory(path: trimmed(base) + "/callapi", origin: .platformDefault)
        }
        let home = trimmed(environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path)
        #if os(macOS)
            return DataDirectory(path: home + "/Library/Application Support/callapi", origin: .platformDefault)
        #else
            return DataDirectory(path: home + "/.local/share/callapi", origin: .platformDefault)
        #endif
    }

    private static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// The path of `name` in this folder.
    public func file(_ name: String) -> String {
        path.hasSuffix("/") ? path + name : path + "/" + name
    }
}
