import CGStreamerShim
import Foundation

/// PNG in and out through GStreamer (`pngenc`, `pngdec`), each in a small pipeline of its own.
public enum PNGCodec {
    /// A decoded picture: 8-bit RGB, rows packed (`width * 3` bytes each).
    public struct Image: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var rgb: [UInt8]

        /// The pixel at (`x`, `y`) as (r, g, b).
        public func pixel(x: Int, y: Int) -> (UInt8, UInt8, UInt8) {
            let offset = (y * width + x) * 3
            return (rgb[offset], rgb[offset + 1], rgb[offset + 2])
        }

        /// How many distinct colours the picture has.
        public var distinctColours: Int {
            var seen = Set<UInt32>()
            for offset in stride(from: 0, to: rgb.count - 2, by: 3) {
                seen.insert(UInt32(rgb[offset]) << 16 | UInt32(rgb[offset + 1]) << 8 | UInt32(rgb[offset + 2]))
            }
            return seen.count
        }

        /// The variance of the luma (0 for a blank picture).
        public var lumaVariance: Double {
            let count = width * height
            guard count > 0 else { return 0 }
            var sum = 0.0
            var squares = 0.0
            for index in 0..<count {
                let (r, g, b) = (Double(rgb[index * 3]), Double(rgb[index * 3 + 1]), Double(rgb[index * 3 + 2]))
                let luma = 0.299 * r + 0.587 * g + 0.114 * b
                sum += luma
                squares += luma * luma
            }
            let mean = sum / Double(count)
            return squares / Double(count) - mean * mean
        }
    }

    /// Decodes the PNG file at `path`; `nil` when it cannot.
    public static func decode(path: String) -> Image? {
        GStreamerRuntime.ensureInitialized()
        let escaped = path.replacingOccurrences(of: "\"", with: "\\\"")
        guard
            let pipeline = try? GStreamerRuntime.makePipeline(
                "filesrc location=\"\(escaped)\" ! pngdec ! videoconvert ! video/x-raw,format=RGB ! appsink name=sink sync=false"
            )
        else { return nil }
        defer {
            gst_element_set_state(pipeline.pointer, GST_STATE_NULL)
            gst_object_unref(pipeline.pointer)
        }
        guard let sink = pipeline.child("sink") else { return nil }
        gst_element_set_state(pipeline.pointer, GST_STATE_PLAYING)
        guard let sample = gst_app_sink_try_pull_sample(cgst_app_sink(sink.pointer), 5 * 1_000_000_000) else {
            return nil
        }
        defer { gst_sample_unref(sample) }
        guard let caps = gst_sample_get_caps(sample), let structure = gst_caps_get_structure(caps, 0),
            let buffer = gst_sample_get_buffer(sample)
        else { return nil }
        var width: gint = 0
        var height: gint = 0
        guard gst_structure_get_int(structure, "width", &width) != 0,
            gst_structure_get_int(structure, "height", &height) != 0, width > 0, height > 0
        else { return nil }
        let bytes = copyBytes(of: buffer)
        let rowBytes = Int(width) * 3
        let stride = (rowBytes + 3) & ~3
        guard bytes.count >= stride * (Int(height) - 1) + rowBytes else { return nil }
        var rgb = [UInt8]()
        rgb.reserveCapacity(rowBytes * Int(height))
        for row in 0..<Int(height) {
            rgb.append(contentsOf: bytes[(row * stride)..<(row * stride + rowBytes)])
        }
        return Image(width: Int(width), height: Int(height), rgb: rgb)
    }

    /// Encodes one raw video frame as PNG.
    static func encode(_ frame: FrameRef) -> Data? {
        guard
            let pipeline = try? GStreamerRuntime.makePipeline(
                "appsrc name=src format=time ! videoconvert ! pngenc ! appsink name=sink sync=false")
        else { return nil }
        defer {
            gst_element_set_state(pipeline.pointer, GST_STATE_NULL)
            gst_object_unref(pipeline.pointer)
        }
        guard let source = pipeline.child("src"), let sink = pipeline.child("sink") else { return nil }
        let appSource = cgst_app_src(source.pointer)
        gst_app_src_set_caps(appSource, frame.caps)
        gst_element_set_state(pipeline.pointer, GST_STATE_PLAYING)
        // The frame's timestamps belong to another pipeline's clock; a copy without them encodes anyway.
        guard let copy = gst_buffer_copy_deep(frame.buffer) else { return nil }
        copy.pointee.pts = GstClockTime.max
        copy.pointee.dts = GstClockTime.max
        _ = gst_app_src_push_buffer(appSource, copy)
        _ = gst_app_src_end_of_stream(appSource)
        guard let sample = gst_app_sink_try_pull_sample(cgst_app_sink(sink.pointer), 5 * 1_000_000_000) else {
            return nil
        }
        defer { gst_sample_unref(sample) }
        guard let buffer = gst_sample_get_buffer(sample) else { return nil }
        return Data(copyBytes(of: buffer))
    }

    private static func copyBytes(of buffer: UnsafeMutablePointer<GstBuffer>) -> [UInt8] {
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return [] }
        defer { gst_buffer_unmap(buffer, &map) }
        return Array(UnsafeBufferPointer(start: map.data, count: Int(map.size)))
    }
}
