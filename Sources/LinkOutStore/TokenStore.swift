import LinkOutCore

/// Where visits are kept. Used from one thread at a time (the writer's, or an export command's).
public protocol TokenStore: AnyObject {
    /// Commits every visit in one durable transaction. Visits of the same token count as one token with
    /// more hits, whether the store merges them when writing or when reading. Throws if anything fails;
    /// then nothing of the batch is kept.
    func commit(_ visits: [VisitRecord]) throws

    /// A durable write that records no visit, to learn whether a store that failed works again while no
    /// shopper's visit is waiting.
    func probe() throws

    /// Calls `body` with every stored token, in the order they were first seen.
    func forEachToken(_ body: (StoredToken) throws -> Void) throws

    /// How many visits were sent on without a valid token (for operators; nothing to report to Apple).
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
