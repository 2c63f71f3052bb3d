import Foundation
import NIOConcurrencyHelpers

/// The device side of the mock: what each device token would receive from APNs or FCM (the payloads of the pushes
/// the mock accepted, in order), and the phones waiting for their next one. `callapi phone --sleep-until-push`
/// reads it over `GET /device/<token>`, as a phone's OS would be woken by the real services.
public final class MockDeviceInbox: Sendable {
    /// Phones waiting at once, at most; more are answered 429 at once.
    public static let maxWaiters = 64
    /// Payloads kept per device token, at most (the oldest go first; numbering goes on).
    public static let maxKeptPerDevice = 256

    private struct Waiter {
        var token: String
        var index: Int
        var continuation: CheckedContinuation<Delivery, Never>
    }

    private struct Received {
        /// How many were received in all, the dropped ones included.
        var count = 0
        /// The last ones, `count - payloads.count` being the number of the first.
        var payloads: [String] = []
    }

    private struct State {
        var devices: [String: Received] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    /// What a wait for a payload found.
    public enum Delivery: Sendable, Equatable {
        /// Payload number `index` (from 0) for the device.
        case payload(index: Int, String)
        /// None arrived in time.
        case none
        /// Too many phones wait already.
        case busy
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// How many payloads `token` has received so far.
    public func count(for token: String) -> Int {
        state.withLockedValue { $0.devices[token]?.count ?? 0 }
    }

    /// Keeps `payload` as the next one received by `token` and wakes its waiters.
    func deliver(_ payload: String, to token: String) {
        let woken: [(CheckedContinuation<Delivery, Never>, Delivery)] = state.withLockedValue { state in
            var received = state.devices[token] ?? Received()
            received.count += 1
            received.payloads.append(payload)
            if received.payloads.count > Self.maxKeptPerDevice { received.payloads.removeFirst() }
            state.devices[token] = received
            var due: [(CheckedContinuation<Delivery, Never>, Delivery)] = []
            for (key, waiter) in state.waiters.sorted(by: { $0.key < $1.key }) where waiter.token == token {
                if let delivery = Self.delivery(waiter.index, of: received) {
                    state.waiters[key] = nil
                    due.append((waiter.continuation, delivery))
                }
            }
            return due
        }
        for (continuation, delivery) in woken { continuation.resume(returning: delivery) }
    }

    /// Payload number `index` (from 0) for `token`: at once when it was received, else the first one received
    /// within `waitMillis` (a later one when the one asked for was dropped as too old).
    public func payload(for token: String, index: Int, waitMillis: Int) async -> Delivery {
        let key = state.withLockedValue { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskGroup(of: Delivery.self) { group in
            group.addTask { await self.wait(key: key, token: token, index: index) }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(max(0, waitMillis)))
                return .none
            }
            let first = await group.next() ?? .none
            group.cancelAll()
            return first
        }
    }

    /// The device route's path prefix.
    static let pathPrefix = "/device/"
    /// The longest wait a phone may ask for, in seconds.
    public static let maxWaitSeconds = 60

    /// Answers `GET /device/<token>` (`{"deliveries":N}`, the number received so far) and
    /// `GET /device/<token>?next=N&wait=S` (payload number N, from 0, as soon as it is received, waiting at most S
    /// seconds: 200 with the payload and its number in `x-delivery`, 204 when none came, 429 when too many wait).
    func answer(_ uri: String) async -> PushMock.Response {
        func refuse(_ status: Int, _ reason: String) -> PushMock.Response {
            PushMock.Response(status: status, body: "{\"reason\":\"\(reason)\"}")
        }
        let parts = uri.dropFirst(Self.pathPrefix.count).split(
            separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let token = String(parts.first ?? "")
        guard !token.isEmpty, token.count <= 512, !token.contains("/") else { return refuse(400, "BadDeviceToken") }
        guard parts.count == 2 else {
            return PushMock.Response(status: 200, body: "{\"deliveries\":\(count(for: token))}")
        }
        var query: [String: String] = [:]
        for pair in parts[1].split(separator: "&") {
            let keyValue = pair.split(separator: "=", maxSplits: 1)
            query[String(keyValue[0])] = keyValue.count == 2 ? String(keyValue[1]) : ""
        }
        guard let next = query["next"].flatMap({ Int($0) }), next >= 0,
            let wait = query["wait"].flatMap({ Int($0) }), (0...Self.maxWaitSeconds).contains(wait)
        else { return refuse(400, "BadQuery: give next=<0 or more>&wait=<0-\(Self.maxWaitSeconds) seconds>") }
        switch await payload(for: token, index: next, waitMillis: wait * 1000) {
        case .payload(let index, let body):
            return PushMock.Response(
                status: 200, headers: ["content-type": "application/json", "x-delivery": String(index)], body: body)
        case .none:
            return PushMock.Response(status: 204, headers: [:], body: "")
        case .busy:
            return refuse(429, "TooManyWaitingDevices")
        }
    }

    private func wait(key: Int, token: String, index: Int) async -> Delivery {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Delivery, Never>) in
                let ready: Delivery? = state.withLockedValue { state in
                    if let received = state.devices[token], let delivery = Self.delivery(index, of: received) {
                        return delivery
                    }
                    // Cancelled before it was registered: the cancellation handler found nothing to end.
                    if Task.isCancelled { return Delivery.none }
                    guard state.waiters.count < Self.maxWaiters else { return .busy }
                    state.waiters[key] = Waiter(token: token, index: index, continuation: continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLockedValue { $0.waiters.removeValue(forKey: key) }
            waiter?.continuation.resume(returning: .none)
        }
    }

    private static func delivery(_ index: Int, of received: Received) -> Delivery? {
        guard index < received.count else { return nil }
        let first = received.count - received.payloads.count
        let number = max(index, first)
        return .payload(index: number, received.payloads[number - first])
    }

    /// What the device receives for a push body the mock accepted: an APNs body as it is, an FCM message's `data`.
    static func devicePayload(provider: RecordedPush.Provider, body: String) -> String {
        guard provider == .fcm,
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let message = object["message"] as? [String: Any], let data = message["data"],
            let encoded = try? JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])
        else { return body }
        return String(decoding: encoded, as: UTF8.self)
    }
}
