/// Why the server could not start, or a log file could not be opened.
struct ServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
