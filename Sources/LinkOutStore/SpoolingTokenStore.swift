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

    private let lock = NSLock()
    // Guarded by `lock`.
    private var spooling: Bool
    private var spooled: Int
    private var lastError: String?

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
        // PostgreSQL first: a wrong schema ("opening ...") is refused before the spool is touched.
        var unreachable: String?
        do {
            primary = try PostgresTokenStore(url: url, timeoutMs: timeoutMs)
        } catch let error as StoreError where !error.operation.hasPrefix("opening ") {
            // Unreachable, or not answering: spool until it does.
            unreachable = String(describing: error)
        }
        spooling = unreachable != nil
        lastError = unreachable
        let folder = (spoolPath as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        // One process per spool: each replays its own, and a spool is replayed into the store it was written for.
        lockFD = open(spoolPath + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else {
            throw StoreError("opening the spool \(spoolPath)", "cannot create \(spoolPath).lock: \(String(cString: strerror(errno)))")
        }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(lockFD)
            throw StoreError("opening the spool \(spoolPath)", "another linkout is using it: give each instance a spool of its own (storeOutage.spoolPath or --spool)")
        }
        do {
            spool = try SQLiteTokenStore(path: spoolPath)
            try SpoolReplayer.prepare(spool.connection, store: StoreLocation.redactingPassword(url))
            spooled = Int(try spool.connection.integer(
                "SELECT (SELECT count(*) FROM visits) + (SELECT count(*) FROM untokened_visits)"))
            replayer = try SpoolReplayer(url: url, spoolPath: spoolPath, timeoutMs: timeoutMs, batchSize: replayBatchSize)
        } catch {
            Glibc.close(lockFD)
            throw error
        }
        replayer.owner = self
        if let lastError {
            onEvent(.warning, "PostgreSQL unreachable at start; recording visits in the local spool until it answers",
                    ["error": lastError, "spool": spoolPath])
        }
        if spooled > 0 {
            onEvent(.notice, "the spool holds visits from an earlier run; replaying them once PostgreSQL answers",
                    ["visits": "\(spooled)", "spool": spoolPath])
        }
        if replayInBackground { replayer.start() }
    }

    public var outageStatus: StoreOutageStatus {
        lock.lock()
        defer { lock.unlock() }
        return StoreOutageStatus(spooling: spooling, spooledVisits: max(0, spooled), lastError: spooling ? lastError : nil)
    }

    private var isSpooling: Bool {
        lock.lock()
        defer { lock.unlock() }
        return spooling
    }

    public func commit(_ visits: [VisitRecord]) throws {
        try commit(visits, identity: nil)
    }

    /// A batch whose PostgreSQL commit failed goes to the spool with its identity, so that if the commit
    /// did land (only its acknowledgement was lost), the replay recognises the batch and skips it; a retry
    /// into the spool is recognised by the spool itself.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity) throws {
        try commit(visits, identity: batch)
    }

    /// Extras (refusals, health changes) go to PostgreSQL with the batch; while spooling they are dropped:
    /// they are counts for the dashboard, not records anyone must be told of, and a spool replay carries
    /// visits only.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras) throws {
        if !extras.isEmpty, !isSpooling {
            do {
                try postgres().commit(visits, batch: batch, extras: extras)
                return
            } catch {
                enterOutage(error)
            }
        }
        try commit(visits, identity: batch)
    }

    private func commit(_ visits: [VisitRecord], identity: BatchIdentity?) throws {
        if visits.isEmpty { return }
        if !isSpooling {
            do {
                if let identity { try postgres().commit(visits, batch: identity) } else { try postgres().commit(visits) }
                return
            } catch {
                enterOutage(error)
            }
        }
        if let identity { try spool.commit(visits, batch: identity) } else { try spool.commit(visits) }
        lock.lock()
        spooled += visits.count
        lock.unlock()
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
        lock.lock()
        let wasSpooling = spooling
        spooling = true
        lastError = String(describing: error)
        lock.unlock()
        if !wasSpooling {
            onEvent(.warning, "PostgreSQL failed; recording visits in the local spool until it answers", ["error": "\(error)"])
        }
        replayer.wake()
    }

    // MARK: Called by the replayer

    func replayed(_ count: Int) {
        lock.lock()
        spooled -= count
        lock.unlock()
    }

    /// The spool was found empty and PostgreSQL answered: batches go to PostgreSQL again.
    func leaveOutage() {
        lock.lock()
        let wasSpooling = spooling
        spooling = false
        lock.unlock()
        if wasSpooling {
            onEvent(.notice, "PostgreSQL answers again and the spool is replayed; writing to PostgreSQL", [:])
        }
    }

    var wantsRecoveryCheck: Bool { isSpooling }

    func report(_ level: EventLevel, _ message: String, _ metadata: [String: String]) {
        onEvent(level, message, metadata)
    }
}

/// Moves an outage spool into PostgreSQL, on its own thread with its own connections (one to the spool
/// file, one to PostgreSQL), so the writer never waits for it.
///
/// Exactly once: each table of the spool is a stream named by an id kept in the spool file
/// (`linkout_spool`), whose rows are read in row id order, a batch at a time. A batch and the stream's mark
/// (the last row id applied, in PostgreSQL's `spool_replays`) are committed in one PostgreSQL transaction,
/// and rows at or below the mark are skipped; only then is the batch deleted from the spool. A crash
/// between the two commits leaves rows in the spool that the mark says were applied: the next replay
/// deletes them without counting them again. SQLite hands out row ids above the largest present, and the
/// spool is deleted from the lowest up, so ids only restart when a table is emptied: the stream then gets
/// a new id, in the same transaction as the delete.
final class SpoolReplayer: @unchecked Sendable {
    static let tables = ["visits", "untokened_visits"]

    private let url: String
    private let timeoutMs: Int
    private let spoolPath: String
    private let batchSize: Int
    private let connection: SQLiteConnection
    private var postgres: PostgresTokenStore?
    weak var owner: SpoolingTokenStore?

    private let condition = NSCondition()
    private var stopping = false
    private var woken = false
    private var running = false
    private let finished = DispatchSemaphore(value: 0)
    /// The last failure reported, so an outage logs once rather than every second.
    private var reportedError: String?

    /// Tests: runs after a batch is committed to PostgreSQL and before it is deleted from the spool; a
    /// throw here is a crash between the two.
    var afterPostgresCommit: (() throws -> Void)?

    init(url: String, spoolPath: String, timeoutMs: Int, batchSize: Int) throws {
        self.url = url
        self.timeoutMs = timeoutMs
        self.spoolPath = spoolPath
        self.batchSize = batchSize
        connection = try SQLiteConnection(path: spoolPath, readOnly: false)
        try connection.execute("PRAGMA synchronous=FULL")
    }

    /// Creates the spool's stream ids, once per file, and checks that visits left in it were written for
    /// this store (`store`: its URL without the password); an empty spool is taken over by any store.
    static func prepare(_ connection: SQLiteConnection, store: String) throws {
        try connection.execute("CREATE TABLE IF NOT EXISTS linkout_spool (source TEXT PRIMARY KEY, stream TEXT NOT NULL)")
        for table in tables {
            try connection.execute("INSERT OR IGNORE INTO linkout_spool (source, stream) VALUES ('\(table)', '\(newStream(table))')")
        }
        let owner = try connection.prepare("SELECT stream FROM linkout_spool WHERE source = 'store'")
        let recorded = try owner.step() ? owner.text(0) : nil
        owner.reset()
        if let recorded, recorded != store {
            let waiting = try connection.integer("SELECT (SELECT count(*) FROM visits) + (SELECT count(*) FROM untokened_visits)")
            if waiting > 0 {
                throw StoreError(
                    "opening the spool \(connection.path)",
                    "it holds \(waiting) visits for \(recorded), not \(store): serve with that store until it is replayed, or give this one another spool")
            }
        }
        if recorded != store {
            let statement = try connection.prepare("INSERT OR REPLACE INTO linkout_spool (source, stream) VALUES ('store', ?1)")
            statement.bind(1, store)
            try statement.run()
        }
    }

    private static func newStream(_ table: String) -> String {
        "\(UUID().uuidString.lowercased())/\(table)"
    }

    func start() {
        running = true
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "linkout-spool-replay"
        thread.start()
    }

    func wake() {
        condition.lock()
        woken = true
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        if running { finished.wait() }
        running = false
        postgres?.close()
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    private func run() {
        while !isStopping {
            var replayed = 0
            do {
                replayed = try replayPass()
                if replayed == 0, let owner, owner.wantsRecoveryCheck {
                    // Nothing spooled: is PostgreSQL back? (the writer sends everything to the spool until then)
                    try connectedPostgres().probe()
                    // Anything spooled since the pass above is replayed by the next one.
                    owner.leaveOutage()
                }
                if reportedError != nil {
                    reportedError = nil
                }
            } catch {
                let text = String(describing: error)
                if text != reportedError {
                    reportedError = text
                    owner?.report(.warning, "spool replay waiting for PostgreSQL", ["error": text])
                }
            }
            if replayed > 0 { continue }
            condition.lock()
            if !stopping && !woken { _ = condition.wait(until: Date(timeIntervalSinceNow: 1)) }
            woken = false
            condition.unlock()
        }
    }

    private func connectedPostgres() throws -> PostgresTokenStore {
        if let postgres { return postgres }
        let store = try PostgresTokenStore(url: url, timeoutMs: timeoutMs)
        postgres = store
        return store
    }

    /// Replays at most one batch of each table; returns how many spooled visits it cleared (0: the spool
    /// is empty).
    func replayPass() throws -> Int {
        var cleared = 0
        for table in Self.tables {
            cleared += try replayBatch(table)
        }
        return cleared
    }

    private func replayBatch(_ table: String) throws -> Int {
        let stream = try streamId(table)
        let rows = try readBatch(table)
        guard let last = rows.last?.rowid else { return 0 }
        let applied = try connectedPostgres().commitReplayed(stream: stream, rows: rows, lastRowid: last)
        try afterPostgresCommit?()
        try clear(table, stream: stream, through: last)
        owner?.replayed(rows.count)
        if applied < rows.count {
            owner?.report(.notice, "spooled visits already in PostgreSQL (replayed before a crash, or committed before their acknowledgement was lost); cleared without counting them again",
                          ["stream": stream, "visits": "\(rows.count - applied)"])
        }
        return rows.count
    }

    private func streamId(_ table: String) throws -> String {
        let query = try connection.prepare("SELECT stream FROM linkout_spool WHERE source = ?1")
        query.bind(1, table)
        guard try query.step() else { throw StoreError("reading \(spoolPath)", "no stream id for \(table)") }
        return query.text(0)
    }

    /// The batch identity a spooled row was written with (null for rows spooled by an older linkout).
    private static func identity(_ query: SQLiteStatement, instance: Int32, sequence: Int32) -> BatchIdentity? {
        query.optionalText(instance).map { BatchIdentity(instance: $0, sequence: query.int64(sequence)) }
    }

    private func readBatch(_ table: String) throws -> [SpooledVisit] {
        var rows: [SpooledVisit] = []
        if table == "visits" {
            let query = try connection.prepare("""
                SELECT v.id, v.external_purchase_id, v.app_apple_id, v.bundle_id, v.token_creation_date, v.token_type,
                    v.token_expiration_date, v.link, v.country, v.destination, v.first_seen, v.stale, v.kind, v.experiment,
                    v.variant, b.instance_id, b.sequence, v.path
                FROM visits AS v LEFT JOIN applied_batches AS b ON b.id = v.batch ORDER BY v.id LIMIT \(batchSize)
                """)
            while try query.step() {
                let token = ExternalPurchaseToken(
                    appAppleId: query.int64(2), bundleId: query.text(3), tokenCreationDate: query.int64(4),
                    externalPurchaseId: query.text(1), tokenType: query.optionalText(5).flatMap(TokenType.init(rawValue:)),
                    tokenExpirationDate: query.optionalInt64(6))
                guard let kind = VisitKind(rawValue: query.text(12)) else {
                    throw StoreError("reading \(spoolPath)", "unknown visit kind '\(query.text(12))' in visits")
                }
                let record = TokenRecord(
                    token: token, link: query.text(7), country: query.text(8), destination: query.text(9),
                    seenAt: query.int64(10), stale: query.int64(11) != 0, kind: kind,
                    experiment: query.optionalText(13), variant: query.optionalText(14), path: query.optionalText(17))
                rows.append(SpooledVisit(
                    rowid: query.int64(0), visit: .token(record), batch: Self.identity(query, instance: 15, sequence: 16)))
            }
        } else {
            let query = try connection.prepare("""
                SELECT u.id, u.link, u.country, u.destination, u.reason, u.seen_at, u.kind, b.instance_id, b.sequence
                FROM untokened_visits AS u LEFT JOIN applied_batches AS b ON b.id = u.batch ORDER BY u.id LIMIT \(batchSize)
                """)
            while try query.step() {
                guard let reason = RejectReason(rawValue: query.text(4)) else {
                    throw StoreError("reading \(spoolPath)", "unknown reason '\(query.text(4))' in untokened_visits")
                }
                guard let kind = VisitKind(rawValue: query.text(6)) else {
                    throw StoreError("reading \(spoolPath)", "unknown visit kind '\(query.text(6))' in untokened_visits")
                }
                let visit = UntokenedVisit(
                    link: query.text(1), country: query.text(2), destination: query.text(3), reason: reason,
                    seenAt: query.int64(5), kind: kind)
                rows.append(SpooledVisit(
                    rowid: query.int64(0), visit: .untokened(visit), batch: Self.identity(query, instance: 7, sequence: 8)))
            }
        }
        return rows
    }

    /// Deletes a replayed batch from the spool, and renews the stream id if that emptied the table.
    private func clear(_ table: String, stream: String, through last: Int64) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            // Another process sharing this spool file may have cleared (and renewed) it meanwhile.
            guard try streamId(table) == stream else {
                try connection.execute("ROLLBACK")
                return
            }
            try connection.execute("DELETE FROM \(table) WHERE id <= \(last)")
            if try connection.integer("SELECT count(*) FROM (SELECT 1 FROM \(table) LIMIT 1)") == 0 {
                try connection.execute("UPDATE linkout_spool SET stream = '\(Self.newStream(table))' WHERE source = '\(table)'")
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}

/// One row read back from the spool: its row id in its table, the visit, and the writer batch it was
/// spooled with.
struct SpooledVisit {
    var rowid: Int64
    var visit: VisitRecord
    var batch: BatchIdentity?
}
