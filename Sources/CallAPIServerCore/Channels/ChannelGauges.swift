/// What the RTC channels' gauges show, read in one call when the metrics are read.
package struct ChannelGauges: Equatable, Sendable {
    /// Channels with at least one member, and their members.
    package var open: Int
    package var members: Int
    /// Frames and bytes queued for all connections' writers.
    package var queuedFrames: Int
    package var queuedBytes: Int
}

extension ChannelState {
    /// The gauges now.
    package var gauges: ChannelGauges {
        ChannelGauges(
            open: channelCount, members: memberCount, queuedFrames: queuedFrames, queuedBytes: queuedBytes)
    }
}
