import ArgumentParser

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
}
