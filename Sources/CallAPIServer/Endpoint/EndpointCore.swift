@_spi(ServerShell) import CallAPIServerCore

/// What an endpoint's shell guards under one lock: its machine's state and the open connections, so that a send
/// is queued in the order the state decided it.
struct EndpointCore<Machine: SessionMachine>: Sendable {
    var state: Machine
    var connections = ConnectionRegistry()
    /// The memory each event's actions are collected in (emptied after each event, see ``EndpointShell``).
    var actions: [Machine.Action] = []
}
