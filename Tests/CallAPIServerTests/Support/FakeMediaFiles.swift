import Foundation

/// The browser's camera and microphone in the browser tests: known content, written by the test. The video is a white
/// square moving across grey (so that a remote picture that changes is this camera's), the audio a 440 Hz tone.
enum FakeMediaFiles {
    /// Writes `camera.y4m` (320×240, 15 fps, 2 s, looped by Chromium) and `microphone.wav` (48 kHz, 16-bit, mono,
    /// 2 s) into `folder`.
    static func write(into folder: URL) throws -> (video: URL, audio: URL) {
        let (width, height, frames) = (320, 240, 30)
        var video = Data("YUV4MPEG2 W\(width) H\(height) F15:1 Ip A1:1 C420jpeg\n".utf8)
        for frame in 0..<frames {
            video.append(contentsOf: Array("FRAME\n".utf8))
            var luma = [UInt8](repeating: 96, count: width * height)
            let left = frame * (width - 60) / frames
            for y in 90..<150 {
                for x in left..<(left + 60) { luma[y * width + x] = 235 }
            }
            video.append(contentsOf: luma)
            video.append(contentsOf: [UInt8](repeating: 128, count: width * height / 2))
        }
        let rate = 48_000
        var samples = Data()
        for index in 0..<(rate * 2) {
            let value = Int16(12_000 * sin(2 * Double.pi * 440 * Double(index) / Double(rate)))
            withUnsafeBytes(of: value.littleEndian) { samples.append(contentsOf: $0) }
        }
        var audio = Data("RIFF".utf8)
        func append32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { audio.append(contentsOf: $0) } }
        func append16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { audio.append(contentsOf: $0) } }
        append32(36 + samples.count)
        audio.append(contentsOf: Array("WAVEfmt ".utf8))
        append32(16)
        append16(1)  // PCM
        append16(1)  // mono
        append32(rate)
        append32(rate * 2)
        append16(2)
        append16(16)
        audio.append(contentsOf: Array("data".utf8))
        append32(samples.count)
        audio.append(samples)
        let videoURL = folder.appendingPathComponent("camera.y4m")
        let audioURL = folder.appendingPathComponent("microphone.wav")
        try video.write(to: videoURL)
        try audio.write(to: audioURL)
        return (videoURL, audioURL)
    }
}
