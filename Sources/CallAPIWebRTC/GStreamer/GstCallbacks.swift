import CGStreamerShim

// C callbacks into Swift, all through the shim's handlers (which make the hand-over from the registering
// thread to GStreamer's threads visible to the thread sanitizer). Each registration passes a retained box as
// the context; the box's release runs when the handler, probe or promise goes away, balancing the retain.

/// Receives a buffer probe's buffers; returns whether to keep probing.
final class BufferProbeBox: Sendable {
    let onBuffer: @Sendable (UnsafeMutablePointer<GstPad>, UnsafeMutablePointer<GstBuffer>) -> Bool

    init(_ onBuffer: @escaping @Sendable (UnsafeMutablePointer<GstPad>, UnsafeMutablePointer<GstBuffer>) -> Bool) {
        self.onBuffer = onBuffer
    }
}

/// Sees that data (a buffer or a buffer list) passed a pad; returns whether to keep probing.
final class DataProbeBox: Sendable {
    let onData: @Sendable () -> Bool
    init(_ onData: @escaping @Sendable () -> Bool) { self.onData = onData }
}

/// Receives `on-ice-candidate`.
final class IceCandidateBox: Sendable {
    let onCandidate: @Sendable (UInt32, String) -> Void
    init(_ onCandidate: @escaping @Sendable (UInt32, String) -> Void) { self.onCandidate = onCandidate }
}

/// Receives `pad-added`, synchronously on the streaming thread that added the pad.
final class PadAddedBox: Sendable {
    let onPad: @Sendable (UnsafeMutablePointer<GstPad>) -> Void
    init(_ onPad: @escaping @Sendable (UnsafeMutablePointer<GstPad>) -> Void) { self.onPad = onPad }
}

/// Receives a settled promise.
final class PromiseBox: Sendable {
    let onSettled: @Sendable (UnsafeMutablePointer<GstPromise>) -> Void
    init(_ onSettled: @escaping @Sendable (UnsafeMutablePointer<GstPromise>) -> Void) { self.onSettled = onSettled }
}

/// Receives bus messages synchronously on the posting thread.
final class BusBox: Sendable {
    let onMessage: @Sendable (UnsafeMutablePointer<GstMessage>) -> Void
    init(_ onMessage: @escaping @Sendable (UnsafeMutablePointer<GstMessage>) -> Void) { self.onMessage = onMessage }
}

private func releaseBox(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<AnyObject>.fromOpaque(context).release()
}

private func retained(_ box: AnyObject) -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(box).toOpaque()
}

enum GstCallbacks {
    /// Adds a buffer probe on `pad`.
    @discardableResult
    static func addBufferProbe(_ pad: UnsafeMutablePointer<GstPad>, _ box: BufferProbeBox) -> UInt {
        UInt(
            cgst_pad_add_probe(
                pad, GST_PAD_PROBE_TYPE_BUFFER,
                { context, pad, info in
                    guard let pad, let info, let context, let buffer = cgst_probe_buffer(info) else {
                        return GST_PAD_PROBE_OK
                    }
                    let box = Unmanaged<BufferProbeBox>.fromOpaque(context).takeUnretainedValue()
                    return box.onBuffer(pad, buffer) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_REMOVE
                }, retained(box), { releaseBox($0) }))
    }

    /// Adds a probe on `pad` that fires for buffers and buffer lists (payloaders push lists).
    static func addDataProbe(_ pad: UnsafeMutablePointer<GstPad>, _ box: DataProbeBox) {
        _ = cgst_pad_add_probe(
            pad, GstPadProbeType(GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue),
            { context, _, _ in
                guard let context else { return GST_PAD_PROBE_OK }
                let box = Unmanaged<DataProbeBox>.fromOpaque(context).takeUnretainedValue()
                return box.onData() ? GST_PAD_PROBE_OK : GST_PAD_PROBE_REMOVE
            }, retained(box), { releaseBox($0) })
    }

    static func connectIceCandidate(_ webrtc: ElementRef, _ box: IceCandidateBox) {
        _ = cgst_connect_ice_candidate(
            webrtc.pointer,
            { context, mline, candidate in
                guard let context, let candidate else { return }
                Unmanaged<IceCandidateBox>.fromOpaque(context).takeUnretainedValue()
                    .onCandidate(mline, String(cString: candidate))
            }, retained(box), { releaseBox($0) })
    }

    static func connectPadAdded(_ element: ElementRef, _ box: PadAddedBox) {
        _ = cgst_connect_pad_added(
            element.pointer,
            { context, pad in
                guard let context, let pad else { return }
                Unmanaged<PadAddedBox>.fromOpaque(context).takeUnretainedValue().onPad(pad)
            }, retained(box), { releaseBox($0) })
    }

    /// A promise that calls `box` when settled (owned: unref it after handing it to a signal).
    static func promise(_ box: PromiseBox) -> UnsafeMutablePointer<GstPromise> {
        cgst_promise_new(
            { context, promise in
                guard let promise, let context else { return }
                Unmanaged<PromiseBox>.fromOpaque(context).takeUnretainedValue().onSettled(promise)
            }, retained(box), { releaseBox($0) })
    }

    /// Routes every message of `bus` to `box` on the posting thread and drops it (nobody pops this bus; the
    /// shim releases each message after `box` has seen it).
    static func setSyncHandler(_ bus: UnsafeMutablePointer<GstBus>, _ box: BusBox) {
        cgst_bus_set_sync_handler(
            bus,
            { context, message in
                guard let context, let message else { return }
                Unmanaged<BusBox>.fromOpaque(context).takeUnretainedValue().onMessage(message)
            }, retained(box), { releaseBox($0) })
    }

    /// Removes the sync handler (releasing its box).
    static func clearSyncHandler(_ bus: UnsafeMutablePointer<GstBus>) {
        gst_bus_set_sync_handler(bus, nil, nil, nil)
    }
}
