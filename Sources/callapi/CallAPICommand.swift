import ArgumentParser
import Foundation

@main
struct CallAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "callapi",
        abstract: "1v1 audio/video calls: the CallAPI demo, signaling server, tokens and a terminal phone.",
        subcommands: [
            DemoCommand.self, ChaosCommand.self, ServeCommand.self, TokenCommand.self, PhoneCommand.self,
            CallsCommand.self,
            PushMockCommand.self,
        ]
    )

    /// As ArgumentParser's own `main`, except that an error thrown while a subcommand runs is reported with that
    /// subcommand's usage (``SubcommandFailure``), not the top level's `callapi <subcommand>`.
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try await asyncParseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = command
                try command.run()
            }
        } catch {
            // ArgumentParser's own commands (`help`, and `serve --help`, which `serve` parses as an argument) report
            // as it does.
            guard SubcommandFailure.names(of: type(of: command)) != nil else { exit(withError: error) }
            SubcommandFailure.exit(type(of: command), with: error)
        }
    }
}
