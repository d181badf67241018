import Foundation
import LinkOutCore

/// The in-memory twin of the SQLite store, with the same merge rules, for tests of code above the store.
/// `failNextCommits` makes commits throw, to exercise the failure paths.
public final class MemoryTokenStore: TokenStore, @unchecked Sendable {
    private var tokens: [String: StoredToken] = [:]
    private var order: [String] = []
    private var untokened: [UntokenedVisit] = []
    public var failNextCommits = 0
    /// How long each commit takes, standing in for an fsync (tests of batching need commits that take time).
    public var commitDelayMicroseconds: UInt32 = 0
    public private(set) var commits = 0
    private var appliedBatches: Set<BatchIdentity> = []

    public init() {}

    /// As the real stores: a batch identity already applied commits nothing.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity) throws {
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
                if var existing = tokens[record.externalPurchaseId] {
                    existing.firstSeen = min(existing.firstSeen, record.seenAt)
                    existing.lastSeen = max(existing.lastSeen, record.seenAt)
                    existing.hits += 1
                    tokens[record.externalPurchaseId] = existing
                } else {
                    order.append(record.externalPurchaseId)
                    tokens[record.externalPurchaseId] = StoredToken(
                        externalPurchaseId: record.externalPurchaseId, appAppleId: record.appAppleId,
                        bundleId: record.bundleId, tokenCreationDate: record.tokenCreationDate,
                        tokenType: record.tokenType?.rawValue, tokenExpirationDate: record.tokenExpirationDate,
                        environment: record.environment.rawValue, link: record.link, country: record.country,
                        destination: record.destination, firstSeen: record.seenAt, lastSeen: record.seenAt,
                        hits: 1, stale: record.stale)
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
        for id in order { try body(tokens[id]!) }
    }

    public func untokenedVisitCount() throws -> Int { untokened.count }

    public func close() {}
}
