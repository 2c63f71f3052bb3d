/// Where a ``WebRTCEngine`` takes its camera and microphone from, and where remote audio goes.
///
/// The defaults need no devices: a test pattern and a test tone, and remote audio played into a
/// `fakesink` (through a `volume` element, so playback volume and mute work headless).
public struct WebRTCMediaSources: Sendable, Equatable {
    /// The camera.
    public enum Video: Sendable, Equatable {
        /// `videotestsrc` with this `pattern` (a nick such as `smpte`, `ball`, `snow`, `colors`).
        case testPattern(String)
        /// A V4L2 device such as `/dev/video0`.
        case device(String)
        /// A media file, decoded and paced in real time (played once).
        case file(String)
        /// A gst-launch description producing raw video, for anything else.
        case pipeline(String)
    }

    /// The microphone.
    public enum Audio: Sendable, Equatable {
        /// `audiotestsrc` with this `wave` (a nick such as `sine`, `ticks`, `pink-noise`).
        case testTone(String)
        /// A PulseAudio source (`nil`: the default one).
        case device(String?)
        /// A media file, decoded and paced in real time (played once).
        case file(String)
        /// A gst-launch description producing raw audio.
        case pipeline(String)
    }

    /// Where remote audio is played.
    public enum AudioOutput: Sendable, Equatable {
        /// Nowhere (`fakesink`), still decoded and paced: for servers, bots and tests.
        case discard
        /// The default sound device (`autoaudiosink`).
        case speaker
        /// A gst-launch description of a sink.
        case pipeline(String)
    }

    public var video: Video
    public var audio: Audio
    public var audioOutput: AudioOutput
    /// Captured video size and rate.
    public var width: Int
    public var height: Int
    public var framesPerSecond: Int

    public init(
        video: Video = .testPattern("smpte"), audio: Audio = .testTone("sine"), audioOutput: AudioOutput = .discard,
        width: Int = 320, height: Int = 240, framesPerSecond: Int = 30
    ) {
        self.video = video
        self.audio = audio
        self.audioOutput = audioOutput
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
    }

    /// The gst-launch description of the camera up to raw video of the configured size and rate.
    var videoCaptureDescription: String {
        let source: String
        switch video {
        case .testPattern(let pattern): source = "videotestsrc is-live=true pattern=\(quoted(pattern))"
        case .device(let path): source = "v4l2src device=\(quoted(path))"
        case .file(let path): source = "filesrc location=\(quoted(path)) ! decodebin ! identity sync=true"
        case .pipeline(let description): source = description
        }
        return
            "\(source) ! videoconvert ! videoscale ! videorate ! video/x-raw,format=I420,width=\(width),height=\(height),framerate=\(framesPerSecond)/1"
    }

    /// The gst-launch description of the microphone up to raw 48 kHz audio.
    var audioCaptureDescription: String {
        let source: String
        switch audio {
        case .testTone(let wave): source = "audiotestsrc is-live=true wave=\(quoted(wave)) volume=0.3"
        case .device(let name): source = name.map { "pulsesrc device=\(quoted($0))" } ?? "autoaudiosrc"
        case .file(let path): source = "filesrc location=\(quoted(path)) ! decodebin ! identity sync=true"
        case .pipeline(let description): source = description
        }
        return
            "\(source) ! audioconvert ! audioresample ! audio/x-raw,format=S16LE,layout=interleaved,rate=48000,channels=2"
    }

    /// The sink remote audio ends in.
    var audioOutputDescription: String {
        switch audioOutput {
        case .discard: "fakesink sync=true async=false"
        case .speaker: "autoaudiosink async-handling=true"
        case .pipeline(let description): description
        }
    }

    private func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
