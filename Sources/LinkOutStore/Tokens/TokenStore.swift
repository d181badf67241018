import LinkOutCore

/// Where visits are kept. Used from one thread at a time (the writer's, or an export command's).
public protocol TokenStore: AnyObject {
    /// Commits every visit in one durable transaction. Visits of the same token count as one token with
    /// more hits, whether the store merges them when writing or when reading. Throws if anything fails;
    /// then nothing of the batch is kept.
    func commit(_ visits: [VisitRecord]) throws

    /// Commits a batch, at most once per `batch` identity: the identity is recorded in the same
    /// transaction as the visits, and a batch whose identity is already recorded (a retry after a COMMIT
    /// that landed although its acknowledgement was lost) commits nothing and succeeds. The writer always
    /// calls this one; stores that keep no identities fall back to `commit(_:)`. `now` (Unix ms, the
    /// writer's clock) is when the batch is applied: identities are kept 7 days of it, and pruned at most
    /// once an hour of these times.
    func commit(_ visits: [VisitRecord], batch: BatchIdentity, now: Int64) throws

    /// Commits a batch as `commit(_:batch:)` does, and in the same transaction the dashboard's counts:
    /// the batch's visits per bucket, and `extras` (refusals and health changes gathered meanwhile).
    /// `visits` may be empty when only extras are waiting. Stores without a dashboard ignore the extras.
    func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras, now: Int64) throws

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

extension TokenStore {
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, now: Int64) throws {
        try commit(visits)
    }

    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras, now: Int64) throws {
        if visits.isEmpty { return }
        try commit(visits, batch: batch, now: now)
    }
}

/// Which writer batch visits belong to: the writing process's instance id (a random UUID made when its
/// writer starts) and the batch's sequence number in that process. A retry of a batch keeps its identity,
/// so a store can tell a batch it already holds from a new one.
public struct BatchIdentity: Sendable, Hashable, CustomStringConvertible {
    public var instance: String
    public var sequence: Int64

    public init(instance: String, sequence: Int64) {
        self.instance = instance
        self.sequence = sequence
    }

    public var description: String { "\(instance)#\(sequence)" }
}

/// A store failure, with the operation and the database's own message.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var message: String
    /// What callers decide on (whether an outage may be spooled through, say), so none reads the wording.
    public var kind: Kind

    public enum Kind: Sendable, Equatable {
        /// The database is not at this build's schema: nothing can be written until an upgrade.
        case schemaMismatch
        /// Anything else: unreachable, timed out, refused, I/O.
        case other
    }

    public init(_ operation: String, _ message: String, kind: Kind = .other) {
        self.operation = operation
        self.message = message
        self.kind = kind
    }

    public var description: String { "\(operation): \(message)" }
}
