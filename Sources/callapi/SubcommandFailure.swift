import ArgumentParser
import Foundation

/// Ends the process for an error a subcommand threw while running: its message, then the usage of that subcommand
/// (`callapi calls --server …`) and where its help is, on stderr, with ArgumentParser's exit code for the error
/// (64 for a ``ValidationError``, 1 otherwise). `ExitCode` and `CleanExit` pass through unchanged: whoever threw them
/// has said what there was to say.
enum SubcommandFailure {
    static func exit(_ command: any ParsableCommand.Type, with error: any Error) -> Never {
        if error is ExitCode || error is CleanExit { CallAPICommand.exit(withError: error) }
        FileHandle.standardError.write(Data(text(command, error).utf8))
        Foundation.exit(CallAPICommand.exitCode(for: error).rawValue)
    }

    static func text(_ command: any ParsableCommand.Type, _ error: any Error) -> String {
        let message = (error as? ValidationError)?.message ?? "\(error)"
        let name = (["callapi"] + (names(of: command) ?? [])).joined(separator: " ")
        return """
            Error: \(message)
            Usage: \(CallAPICommand.usageString(for: command))
              See '\(name) --help' for more information.

            """
    }

    /// The names leading to `command` from `callapi` (`["calls", "list"]`), or nil when it is not one of ours.
    static func names(of command: any ParsableCommand.Type) -> [String]? {
        func search(_ parent: any ParsableCommand.Type) -> [String]? {
            for child in parent.configuration.subcommands {
                let name = child.configuration.commandName ?? ""
                if ObjectIdentifier(child) == ObjectIdentifier(command) { return [name] }
                if let below = search(child) { return [name] + below }
            }
            return nil
        }
        return search(CallAPICommand.self)
    }
}
