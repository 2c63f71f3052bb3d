import CGStreamerShim

/// Process-wide GStreamer set-up.
enum GStreamerRuntime {
    private static let initialized: Bool = {
        gst_init(nil, nil)
        return true
    }()

    /// Initializes GStreamer once per process (later calls do nothing).
    static func ensureInitialized() {
        _ = initialized
    }

    /// Whether the elements this engine needs are installed; the names of those missing.
    static func missingElements() -> [String] {
        ensureInitialized()
        let needed = [
            "webrtcbin", "vp8enc", "vp8dec", "opusenc", "opusdec", "rtpvp8pay", "rtpvp8depay", "rtpopuspay",
            "rtpopusdepay", "videotestsrc", "audiotestsrc", "valve", "volume", "pngenc", "pngdec", "appsrc",
            "appsink", "nicesrc",
        ]
        return needed.filter { name in
            guard let factory = gst_element_factory_find(name) else { return true }
            gst_object_unref(UnsafeMutableRawPointer(factory))
            return false
        }
    }

    /// Takes a GLib error's message and frees it.
    static func consume(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    }

    /// Takes a newly allocated C string and frees it.
    static func consume(_ text: UnsafeMutablePointer<CChar>?) -> String? {
        guard let text else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }

    /// Makes sure we hold a full (not floating) reference: the parser's results are documented as
    /// floating but come back sunk in some versions.
    private static func owned(_ element: UnsafeMutablePointer<GstElement>) -> ElementRef {
        if g_object_is_floating(element) != 0 { _ = gst_object_ref_sink(element) }
        return ElementRef(element)
    }

    /// Builds a bin from a gst-launch description (owned reference); `ghostPads` ghosts its unlinked pads.
    static func makeBin(_ description: String, ghostPads: Bool) throws(WebRTCEngineError) -> ElementRef {
        var error: UnsafeMutablePointer<GError>?
        let bin = gst_parse_bin_from_description(description, ghostPads ? 1 : 0, &error)
        guard let bin else { throw WebRTCEngineError(.pipeline, "cannot build \(description): \(consume(error))") }
        if let error { g_error_free(error) }
        return owned(cgst_element(bin))
    }

    /// Builds a pipeline from a gst-launch description (owned reference).
    static func makePipeline(_ description: String) throws(WebRTCEngineError) -> ElementRef {
        var error: UnsafeMutablePointer<GError>?
        let element = gst_parse_launch(description, &error)
        guard let element else {
            throw WebRTCEngineError(.pipeline, "cannot build \(description): \(consume(error))")
        }
        if let error { g_error_free(error) }
        return owned(element)
    }
}

/// A pointer to a GStreamer element that may cross threads. GstObject reference counts are atomic and the
/// calls made through these handles (state changes, property sets, pads, signals) are thread-safe in
/// GStreamer. Who owns a reference is said where each handle is stored.
struct ElementRef: @unchecked Sendable, Equatable {
    let pointer: UnsafeMutablePointer<GstElement>

    init(_ pointer: UnsafeMutablePointer<GstElement>) {
        self.pointer = pointer
    }

    /// The child named `name` of this bin (borrowed: valid while this bin holds it).
    func child(_ name: String) -> ElementRef? {
        guard let child = gst_bin_get_by_name(cgst_bin(pointer), name) else { return nil }
        gst_object_unref(child)
        return ElementRef(child)
    }

    /// A static pad (owned: unref it).
    func pad(_ name: String) -> UnsafeMutablePointer<GstPad>? {
        gst_element_get_static_pad(pointer, name)
    }

    func set(_ property: String, _ value: Bool) { cgst_set_bool(pointer, property, value ? 1 : 0) }
    func set(_ property: String, _ value: Double) { cgst_set_double(pointer, property, value) }
    func set(_ property: String, _ value: String) { cgst_set_string(pointer, property, value) }
}

/// A pad we hold a reference to (a tee request pad); same thread-safety as ``ElementRef``.
struct PadRef: @unchecked Sendable, Equatable {
    let pointer: UnsafeMutablePointer<GstPad>
}

/// A buffer and its caps we hold references to, handed to another thread to encode; the buffer is not
/// written after decoding, and both are reference-counted atomically.
struct FrameRef: @unchecked Sendable {
    let buffer: UnsafeMutablePointer<GstBuffer>
    let caps: UnsafeMutablePointer<GstCaps>

    /// Takes new references to `buffer` and the current caps of `pad`; `nil` when the pad has none.
    init?(buffer: UnsafeMutablePointer<GstBuffer>, pad: UnsafeMutablePointer<GstPad>) {
        guard let caps = gst_pad_get_current_caps(pad) else { return nil }
        self.caps = caps
        self.buffer = gst_buffer_ref(buffer)
    }

    /// Drops the references.
    func release() {
        gst_buffer_unref(buffer)
        gst_caps_unref(caps)
    }
}

extension GStreamerRuntime {
    /// Ends GLib's idle pooled threads now instead of after their idle timeout (for counting threads).
    static func stopIdleThreads() {
        cgst_stop_unused_threads()
    }
}
