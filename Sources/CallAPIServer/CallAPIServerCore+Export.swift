// The server's settings and the values its public API takes and returns (`HubLimits`, `ChannelSettings`,
// `PlaceCallOrder`, the ledger's `CallEvent`…) are declared with the machines in CallAPIServerCore: re-exported, so
// that apps and tools that `import CallAPIServer` configure and embed the server as before. The machines themselves
// are `package`, seen by this package's modules only.
@_exported import CallAPIServerCore
