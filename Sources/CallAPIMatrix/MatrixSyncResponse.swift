/// The part of a `/sync` answer the bench reads: the next token and the to-device events.
struct MatrixSyncResponse: Decodable, Sendable {
    struct ToDevice: Decodable, Sendable {
        var events: [Event]
    }

    struct Event: Decodable, Sendable {
        var type: String
        var sender: String
        var content: Content
    }

    struct Content: Decodable, Sendable {
        var body: String?
    }

    var nextBatch: String
    var toDevice: ToDevice?

    enum CodingKeys: String, CodingKey {
        case nextBatch = "next_batch"
        case toDevice = "to_device"
    }
}
