@_spi(ServerShell) import CallAPIServerCore
import Logging

/// Claims and releases this node's RTC channels in the cluster's database (``ChannelAction/claimHome(_:channel:)``),
/// one at a time and in the order the channel state asked: a release and a later claim of the same channel must not
/// pass each other.
final class ClusterChannelHomes: ChannelHomeKeeper {
    private enum Request {
        case claim(String, found: @Sendable (ChannelHome) -> Void)
        case release(String)
        /// This node registered again with `epoch`: the channels it holds are claimed again under it.
        case reclaim(epoch: Int64)
    }

    /// Requests waiting, at most: a claim beyond it is answered ``ChannelHome/unknown(reason:)`` at once.
    static let maxWaiting = 10_000

    private let store: ClusterStore
    private let logger: Logger
    private let requests: AsyncStream<Request>
    private let continuation: AsyncStream<Request>.Continuation

    init(store: ClusterStore, logger: Logger) {
        self.store = store
        self.logger = logger
        (requests, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(Self.maxWaiting))
    }

    func claim(_ channel: String, found: @escaping @Sendable (ChannelHome) -> Void) {
        if case .dropped = continuation.yield(.claim(channel, found: found)) {
            found(.unknown(reason: "\(Self.maxWaiting) channel claims are already waiting"))
        }
    }

    func release(_ channel: String) {
        if case .dropped = continuation.yield(.release(channel)) {
            // Harmless: the claim names a live node, which becomes the channel's home again at its next join.
            logger.warning("a channel's claim was kept: too many claims waiting", metadata: ["channel": "\(channel)"])
        }
    }

    /// Claims again the channels this node holds, once it has registered again with `epoch` (its rows went with its
    /// old epoch).
    func registered(epoch: Int64) {
        _ = continuation.yield(.reclaim(epoch: epoch))
    }

    /// The node holding `channel` now, if a live one does; `nil` too when the cluster cannot be asked (logged).
    func holder(of channel: String) async -> ChannelHome? {
        do {
            return try await ClusterLink.bounded { try await self.store.channelHolder(channel) }
        } catch {
            logger.warning(
                "a channel's node could not be read",
                metadata: ["channel": "\(channel)", "error": "\(ClusterError.describe(error))"])
            return nil
        }
    }

    /// Performs the requests until the link stops; `epoch` is this node's while it is a member.
    func run(epoch: @escaping @Sendable () -> Int64?) async {
        // The channels this node claimed and has not released: only this loop reads or changes it.
        var held = Set<String>()
        for await request in requests {
            switch request {
            case .reclaim(let epoch):
                guard !held.isEmpty else { continue }
                let channels = held.sorted()
                do {
                    let lost = try await ClusterLink.bounded {
                        try await self.store.reclaimChannels(channels, epoch: epoch)
                    }
                    for channel in lost {
                        held.remove(channel)
                        logger.warning(
                            "a channel with members here is held by another node now: who joins there meets others",
                            metadata: ["channel": "\(channel)"])
                    }
                } catch {
                    logger.warning(
                        "this node's channels could not be claimed again",
                        metadata: ["channels": "\(channels.count)", "error": "\(ClusterError.describe(error))"])
                }
            case .claim(let channel, let found):
                guard let epoch = epoch() else {
                    found(.unknown(reason: "this node is not a member of its cluster now"))
                    continue
                }
                do {
                    let home = try await ClusterLink.bounded {
                        try await self.store.claimChannel(channel, epoch: epoch)
                    }
                    if home == .here { held.insert(channel) }
                    found(home)
                } catch {
                    let reason = ClusterError.describe(error)
                    logger.warning(
                        "a channel could not be claimed: its member joins here",
                        metadata: ["channel": "\(channel)", "error": "\(reason)"])
                    found(.unknown(reason: reason))
                }
            case .release(let channel):
                held.remove(channel)
                do {
                    try await ClusterLink.bounded { try await self.store.releaseChannel(channel) }
                } catch {
                    logger.warning(
                        "a channel's claim could not be released",
                        metadata: ["channel": "\(channel)", "error": "\(ClusterError.describe(error))"])
                }
            }
        }
    }
}
