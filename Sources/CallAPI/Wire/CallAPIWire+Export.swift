// `JSONValue` moved to CallAPIWire but stays part of CallAPI's public API (user extensions, event info): re-exported,
// so that apps that `import CallAPI` compile unchanged. `RTCQuality` lives there too, as both the engine seam and the
// call report (the signaling protocol) carry it. Everything else in CallAPIWire is `package`, seen by this
// package's modules only.
@_exported import CallAPIWire
