import Foundation
import LinkOutCore

/// The in-memory twin of the SQLite store, merging visits by the same rule (`TokenMerge`), for tests of
/// code above the store; the shared store checks run on it too.
/// `failNextCommits` makes commits throw, to exercise the failure paths.
public final class MemoryTokenStore: TokenStore, @unchecked Sendable {
    private var tokens: [String: TokenMerge] = [:]
    private var order: [String] = []
    private var untokened: [UntokenedVisit] = []
    public var failNextCommits = 0
    /// How long each commit takes, standing in for an fsync (tests of batching need commits that take time).
    public var commitDelayMicroseconds: UInt32 = 0
    public private(set) var commits = 0
    private var appliedBatches: Set<BatchIdentity> = []

    public init() {}

    /// As the real stores: a batch identity already applied commits nothing.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, now: Int64) throws {
        if appliedBatches.contains(batch) { return }
        try commit(visits)
        appliedBatches.insert(batch)
    }

    public func commit(_ visits: [VisitRecord]) throws {
        if failNextCommits > 0 {
            failNextCommits -= 1
            throw StoreError("writing", "simulated failure")
        }
        if commitDelayMicroseconds > 0 { usleep(commitDelayMicroseconds) }
        commits += 1
        for visit in visits {
            switch visit {
            case .token(let record):
                if tokens[record.externalPurchaseId] == nil {
                    order.append(record.externalPurchaseId)
                    tokens[record.externalPurchaseId] = TokenMerge(record)
                } else {
                    tokens[record.externalPurchaseId]?.add(record)
                }
            case .untokened(let visit):
                untokened.append(visit)
            }
        }
    }

    public func probe() throws {
        if failNextCommits > 0 {
            failNextCommits -= 1
            throw StoreError("writing", "simulated failure")
        }
    }

    public func forEachToken(_ body: (StoredToken) throws -> Void) throws {
        for id in order { try body(tokens[id]!.token) }
    }

    public func untokenedVisitCount() throws -> Int { untokened.count }

    public func close() {}
}
