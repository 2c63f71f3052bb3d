/// The server answered `callapi calls` with an error status (a wrong admin key: 401).
struct ServerRefusal: Error, CustomStringConvertible {
    var status: Int
    var body: String
    var description: String { "the server answered \(status): \(body)" }
}
