/// What the phone does with the lines it reads while it connects and logs in, a pure value: a `quit` typed (or
/// the end of input) with nothing before it ends the phone at once, however long the server takes to answer;
/// other lines wait, in order, for the connection, and a `quit` behind them waits with them (a script piped in:
/// `printf 'call 1002\nwait 3\nhangup\nquit\n' | callapi phone …` runs whole once the phone is connected).
struct PhoneStartupInput: Sendable, Equatable {
    enum Decision: Sendable, Equatable {
        /// Keep waiting for the login.
        case keepWaiting
        /// Stop connecting and exit.
        case quitNow
    }

    /// The lines read so far, to be run once the phone is logged in.
    private(set) var queued: [String] = []

    mutating func line(_ line: String) -> Decision {
        if queued.isEmpty, ["quit", "exit"].contains(line.lowercased()) { return .quitNow }
        if !line.isEmpty { queued.append(line) }
        return .keepWaiting
    }

    /// The end of input: quit when no line waits for the connection; the lines that wait still run when it comes
    /// (the login gives up by itself after its timeout).
    func endOfInput() -> Decision { queued.isEmpty ? .quitNow : .keepWaiting }
}
