import CGStreamerShim

/// The engine's GStreamer pipeline: camera and microphone feeding two tees that every peer link taps, and
/// a preview sink on each so the capture runs with no peer. Built and torn down on the engine's queue.
struct MediaPipeline: Sendable {
    /// The pipeline (owned reference, dropped by ``tearDown()``).
    let pipeline: ElementRef
    /// The raw video tee (borrowed from the pipeline).
    let videoTee: ElementRef
    /// The raw audio tee (borrowed from the pipeline).
    let audioTee: ElementRef

    /// Builds the pipeline and sets it playing. `captured` sees every captured video frame; `bus` every
    /// message (on the posting thread).
    static func start(sources: WebRTCMediaSources, captured: BufferProbeBox, bus: BusBox) throws(WebRTCEngineError)
        -> MediaPipeline
    {
        let description = """
            \(sources.videoCaptureDescription) ! tee name=vtee allow-not-linked=true \
            vtee. ! queue leaky=downstream max-size-buffers=1 ! fakesink name=preview sync=false async=false \
            \(sources.audioCaptureDescription) ! tee name=atee allow-not-linked=true \
            atee. ! queue leaky=downstream max-size-buffers=1 ! fakesink sync=false async=false
            """
        let pipeline = try GStreamerRuntime.makePipeline(description)
        guard let videoTee = pipeline.child("vtee"), let audioTee = pipeline.child("atee"),
            let teeSink = videoTee.pad("sink")
        else {
            gst_object_unref(pipeline.pointer)
            throw WebRTCEngineError(.pipeline, "capture pipeline lacks its tees")
        }
        GstCallbacks.addBufferProbe(teeSink, captured)
        gst_object_unref(teeSink)
        if let busPointer = gst_element_get_bus(pipeline.pointer) {
            GstCallbacks.setSyncHandler(busPointer, bus)
            gst_object_unref(busPointer)
        }
        let media = MediaPipeline(pipeline: pipeline, videoTee: videoTee, audioTee: audioTee)
        if gst_element_set_state(pipeline.pointer, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            media.tearDown()
            throw WebRTCEngineError(.pipeline, "capture pipeline cannot play (is the camera or microphone there?)")
        }
        return media
    }

    /// Stops everything (waiting for the streaming threads) and drops the pipeline.
    func tearDown() {
        let bus = gst_element_get_bus(pipeline.pointer)
        // A flushing bus drops what is posted while stopping; queued messages would keep references to
        // webrtcbin (and with it its threads and sockets) alive.
        if let bus { gst_bus_set_flushing(bus, 1) }
        gst_element_set_state(pipeline.pointer, GST_STATE_NULL)
        if let bus {
            GstCallbacks.clearSyncHandler(bus)
            gst_object_unref(bus)
        }
        gst_object_unref(pipeline.pointer)
    }
}
