import LinkOutCore

/// Where visits are kept. Used from one thread at a time (the writer's, or an export command's).
public protocol TokenStore: AnyObject {
    /// Commits every visit in one durable transaction, merging visits of the same token into one row
    /// (first seen, last seen, hits). Throws if anything fails; then nothing of the batch is kept.
    func commit(_ visits: [VisitRecord]) throws

    /// Calls `body` with every stored token, in the order they were first seen.
    func forEachToken(_ body: (StoredToken) throws -> Void) throws

    /// Visits sent on without a valid token, counted per link (for operators; nothing to report).
    func untokenedVisitCount() throws -> Int

    /// Flushes and releases the store.
    func close()
}

/// A store failure, with the operation and the database's own message.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var message: String

    public init(_ operation: String, _ message: String) {
        self.operation = operation
        self.message = message
    }

    public var description: String { "\(operation): \(message)" }
}
