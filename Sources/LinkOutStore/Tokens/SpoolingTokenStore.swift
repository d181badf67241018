import Foundation
import LinkOutCore

#if canImport(Glibc)
import Glibc
#endif

/// How a store with an outage spool is doing, for `/readyz`, metrics and logs.
public struct StoreOutageStatus: Sendable, Equatable {
    /// Batches go to the spool because PostgreSQL failed (and has not been seen working since).
    public var spooling: Bool
    /// Visits committed to the spool and not yet replayed into PostgreSQL.
    public var spooledVisits: Int
    /// Why PostgreSQL last failed, while spooling.
    public var lastError: String?

    /// Spooling, or visits still waiting in the spool: the instance records durably, but not all of it is
    /// in PostgreSQL yet.
    public var degraded: Bool { spooling || spooledVisits > 0 }
}

/// A store that can report an outage it is riding out (the server asks any store it is given).
public protocol StoreOutageReporting: AnyObject, Sendable {
    var outageStatus: StoreOutageStatus { get }
}

/// The PostgreSQL store with a local outage spool (`storeOutage.mode: spool`).
///
/// A batch goes to PostgreSQL; if that fails (unreachable, or no answer within the timeout), the batch is
/// committed to a local SQLite file instead (WAL, `synchronous=FULL`: durable before the writer sends its
/// 302s), and every following batch goes there directly, without waiting on PostgreSQL again. A replay
/// thread with its own connections moves the spool into PostgreSQL once it answers, oldest first, in
/// batches, each exactly once (see `SpoolReplayer`); when the spool is empty and PostgreSQL answers, batches
/// go to PostgreSQL again. Only if the spool cannot commit either does the batch fail (503, nothing kept).
///
/// `commit`, `probe` and `close` run on the writer's thread; `outageStatus` on any.
public final class SpoolingTokenStore: TokenStore, StoreOutageReporting, @unchecked Sendable {
    public enum EventLevel: Sendable { case notice, warning, error }
    /// Reports state changes (entering and leaving the outage, replay progress and failures) for the log.
    public typealias EventHandler = @Sendable (_ level: EventLevel, _ message: String, _ metadata: [String: String]) -> Void

    private let url: String
    private let timeoutMs: Int
    private let onEvent: EventHandler
    /// The writer's PostgreSQL store; nil until PostgreSQL has answered once (it may be down at start).
    private var primary: PostgresTokenStore?
    private let spool: SQLiteTokenStore
    /// Internal for tests, which drive replays by hand.
    let replayer: SpoolReplayer

    /// Holds the spool's `flock` while the store is open.
    private var lockFD: Int32

    /// Where the outage stands; the writer's thread, the replayer's and `/readyz` all read or change it.
    private struct Outage {
        var spooling: Bool
        var spooled: Int
        var lastError: String?
    }
    private let outage: Locked<Outage>

    /// The file whose `flock` says which process owns a spool.
    static func lockPath(_ spoolPath: String) -> String { spoolPath + ".lock" }

    /// Whether another process holds the spool now (for the pre-flight: creates nothing, holds nothing).
    public static func isInUse(spoolPath: String) -> Bool {
        let fd = open(lockPath(spoolPath), O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(fd, LOCK_UN)
        return false
    }

    /// Opens (creating if needed) the spool and connects to PostgreSQL. An unreachable PostgreSQL is not
    /// an error: the store starts spooling and the replay thread waits for the server. A schema that is
    /// not this build's is (nothing can be replayed into it).
    ///
    /// - Parameters:
    ///   - replayInBackground: false in tests that call `replayer.replayPass()` themselves.
    public init(
        url: String, spoolPath: String, timeoutMs: Int, replayBatchSize: Int = 1000,
        replayInBackground: Bool = true, onEvent: @escaping EventHandler = { _, _, _ in }
    ) throws {
        self.url = url
        self.timeoutMs = timeoutMs
        self.onEvent = onEvent
        // PostgreSQL first: a wrong schema is refused before the spool is touched.
        var unreachable: String?
        do {
            primary = try PostgresTokenStore(url: url, timeoutMs: timeoutMs)
        } catch let error as StoreError where error.kind != .schemaMismatch {
            // Unreachable, or not answering: spool until it does.
            unreachable = String(describing: error)
        }
        let folder = (spoolPath as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        // One process per spool: each replays its own, and a spool is replayed into the store it was written for.
        lockFD = open(Self.lockPath(spoolPath), O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else {
            throw StoreError("opening the spool \(spoolPath)", "cannot create \(spoolPath).lock: \(String(cString: strerror(errno)))")
        }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(lockFD)
            throw StoreError(
                "opening the spool \(spoolPath)",
                "another linkout is using it: give each instance a spool of its own (storeOutage.spoolPath or --spool)")
        }
        do {
            spool = try SQLiteTokenStore(path: spoolPath)
            spool.writesDashboardBuckets = false
            try SQLiteTokenStore.prepareSpool(spool.connection, store: StoreLocation.redactingPassword(url))
            let spooled = Int(
                try spool.connection.integer(
                    "SELECT (SELECT count(*) FROM visits) + (SELECT count(*) FROM untokened_visits)"))
            outage = Locked(Outage(spooling: unreachable != nil, spooled: spooled, lastError: unreachable))
            replayer = try SpoolReplayer(url: url, spoolPath: spoolPath, timeoutMs: timeoutMs, batchSize: replayBatchSize)
        } catch {
            Glibc.close(lockFD)
            throw error
        }
        replayer.owner = self
        if let unreachable {
            onEvent(
                .warning, "PostgreSQL unreachable at start; recording visits in the local spool until it answers",
                ["error": unreachable, "spool": spoolPath])
        }
        let spooled = outage.withLock { $0.spooled }
        if spooled > 0 {
            onEvent(
                .notice, "the spool holds visits from an earlier run; replaying them once PostgreSQL answers",
                ["visits": "\(spooled)", "spool": spoolPath])
        }
        if replayInBackground { replayer.start() }
    }

    public var outageStatus: StoreOutageStatus {
        outage.withLock {
            StoreOutageStatus(spooling: $0.spooling, spooledVisits: max(0, $0.spooled), lastError: $0.spooling ? $0.lastError : nil)
        }
    }

    private var isSpooling: Bool {
        outage.withLock { $0.spooling }
    }

    public func commit(_ visits: [VisitRecord]) throws {
        try commit(visits, identity: nil, now: 0)
    }

    /// A batch whose PostgreSQL commit failed goes to the spool with its identity, so that if the commit
    /// did land (only its acknowledgement was lost), the replay recognises the batch and skips it; a retry
    /// into the spool is recognised by the spool itself.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, now: Int64) throws {
        try commit(visits, identity: batch, now: now)
    }

    /// Extras (refusals, health changes) go to PostgreSQL with the batch; while spooling they are dropped:
    /// they are counts for the dashboard, not records anyone must be told of, and a spool replay carries
    /// visits only.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras, now: Int64) throws {
        if !extras.isEmpty, !isSpooling {
            do {
                try postgres().commit(visits, batch: batch, extras: extras, now: now)
                return
            } catch {
                enterOutage(error)
            }
        }
        try commit(visits, identity: batch, now: now)
    }

    /// `now` is read only with an identity.
    private func commit(_ visits: [VisitRecord], identity: BatchIdentity?, now: Int64) throws {
        if visits.isEmpty { return }
        if !isSpooling {
            do {
                if let identity { try postgres().commit(visits, batch: identity, now: now) } else { try postgres().commit(visits) }
                return
            } catch {
                enterOutage(error)
            }
        }
        if let identity { try spool.commit(visits, batch: identity, now: now) } else { try spool.commit(visits) }
        outage.withLock { $0.spooled += visits.count }
        replayer.wake()
    }

    public func probe() throws {
        if !isSpooling {
            do {
                try postgres().probe()
                return
            } catch {
                enterOutage(error)
            }
        }
        try spool.probe()
    }

    /// What is in PostgreSQL (the spool's visits appear once replayed).
    public func forEachToken(_ body: (StoredToken) throws -> Void) throws {
        try postgres().forEachToken(body)
    }

    public func untokenedVisitCount() throws -> Int {
        try postgres().untokenedVisitCount()
    }

    /// Stops the replay thread (leaving what is still spooled for the next start) and closes both stores.
    public func close() {
        replayer.stop()
        primary?.close()
        spool.close()
        if lockFD >= 0 { Glibc.close(lockFD) }
        lockFD = -1
    }

    private func postgres() throws -> PostgresTokenStore {
        if let primary { return primary }
        let store = try PostgresTokenStore(url: url, timeoutMs: timeoutMs)
        primary = store
        return store
    }

    /// Internal for tests, which force an outage with PostgreSQL up.
    func enterOutage(_ error: any Error) {
        let wasSpooling = outage.withLock { state in
            let was = state.spooling
            state.spooling = true
            state.lastError = String(describing: error)
            return was
        }
        if !wasSpooling {
            onEvent(.warning, "PostgreSQL failed; recording visits in the local spool until it answers", ["error": "\(error)"])
        }
        replayer.wake()
    }

    // MARK: Called by the replayer

    func replayed(_ count: Int) {
        outage.withLock { $0.spooled -= count }
    }

    /// The spool was found empty and PostgreSQL answered: batches go to PostgreSQL again.
    func leaveOutage() {
        let wasSpooling = outage.withLock { state in
            let was = state.spooling
            state.spooling = false
            return was
        }
        if wasSpooling {
            onEvent(.notice, "PostgreSQL answers again and the spool is replayed; writing to PostgreSQL", [:])
        }
    }

    var wantsRecoveryCheck: Bool { isSpooling }

    func report(_ level: EventLevel, _ message: String, _ metadata: [String: String]) {
        onEvent(level, message, metadata)
    }
}
