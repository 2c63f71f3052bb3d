// `JSONValue` moved to CallAPIWire but stays part of CallAPI's public API (user extensions, event info): re-exported,
// so that apps that `import CallAPI` compile unchanged. Everything else in CallAPIWire is `package`, seen by this
// package's modules only.
@_exported import CallAPIWire
