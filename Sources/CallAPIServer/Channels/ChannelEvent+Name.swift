import CallAPIServerCore

/// The RTC channel machine's event; named in full because NIO has a `ChannelEvent` of its own.
typealias ChannelEvent = CallAPIServerCore.ChannelEvent
