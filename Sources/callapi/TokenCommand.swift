import ArgumentParser
import CallAPIServer
import CallAPIServerCore
import Foundation

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract:
            "Print a login token (or, with --rtc, a channel token) for a user, signed like `callapi serve` signs them.",
        discussion: """
            With --rtc --channel C it prints an RTC token for joining channel C on /v1/rtc (--channel '*' makes a \
            token for any channel, which servers accept only with --allow-any-channel-tokens). Uses --secret / CALLAPI_SECRET or --es256-private-key / CALLAPI_ES256_PRIVATE_KEY, like the server; \
            with neither it uses the development secret (and says so on stderr). Prints only the token on stdout.
            """)

    @Option(help: "The user id (e.g. 1001).") var user: String
    @Option(help: "Lifetime in seconds.") var ttl: Int = 3600
    @Flag(help: "Issue an RTC token for --channel instead of a login token.") var rtc = false
    @Option(help: "The media channel of an RTC token (implies --rtc).") var channel: String?
    @Option(help: "HS256 secret, at least 32 bytes.") var secret: String?
    @Option(name: .customLong("es256-private-key"), help: "ES256 private key file (PEM).") var es256PrivateKey: String?

    func validate() throws {
        if rtc && channel == nil {
            throw ValidationError("--rtc needs --channel: the channel the token lets the user join")
        }
    }

    func run() async throws {
        let flags = ["secret": secret, "es256-private-key": es256PrivateKey].compactMapValues { $0 }
        let configuration: SignalServerConfiguration
        do {
            configuration = try ServerSettings.configuration(flags: flags)
        } catch {
            throw ValidationError("\(error)")
        }
        if configuration.usesDevelopmentSecret {
            FileHandle.standardError.write(
                Data(
                    "callapi token: signed with the public DEVELOPMENT secret (set CALLAPI_SECRET for real use)\n".utf8)
            )
        }
        let authority = try await TokenAuthority.make(key: configuration.signingKey)
        do {
            print(try await authority.issue(userId: user, ttlSeconds: ttl, channel: channel).token)
        } catch let error as TokenIssueError {
            throw ValidationError(error.description)
        }
    }
}
