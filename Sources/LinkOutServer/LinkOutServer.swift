import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore
import Logging
import Synchronization

/// The gateway's HTTP side: one event loop per thread, each with its own SO_REUSEPORT listener (`HTTPLoop`),
/// all sharing one `Gateway` (immutable) and one group-commit writer.
package final class LinkOutServer: @unchecked Sendable {
    /// What the loops start with; reloads hand each loop a new one. Written by reloads on the main thread,
    /// read by the health checker's, hence locked.
    private let servingState: Locked<ServingState>
    var serving: ServingState {
        get { servingState.withLock { $0 } }
        set { servingState.withLock { $0 = newValue } }
    }
    let settings: ServerSettings
    let logger: Logger
    private(set) var writer: RecordWriter<ReplyTicket>!
    private var loops: [EventLoop] = []
    private var loopThreads: [WorkerThread] = []

    let metrics: GatewayMetrics
    /// Says which paths unrouted tokens arrive on.
    let unroutedLog: UnroutedLog
    /// nil when the access log is off.
    let accessLog: AccessLog?
    private var admin: AdminServer?
    /// The operator dashboard on the admin listener; set before `start` (nil: `/metrics` and health only).
    package var dashboard: DashboardSettings?
    /// Where the admin listener is bound, once started (nil when it is off).
    package private(set) var adminAddress: ListenAddress?

    /// The store's outage state when it has an outage spool (PostgreSQL with `storeOutage.mode: spool`).
    let outageReporter: (any StoreOutageReporting)?

    /// Set on SIGTERM: `/readyz` answers 503 from then on.
    let draining = Atomic<Bool>(false)
    /// How long the oldest queued visit may wait before `/readyz` calls the store stuck.
    let stuckAfterNanoseconds: UInt64 = 5_000_000_000

    /// Destinations' health, shared with every `Gateway` this server runs (they read it per request),
    /// and kept across reloads.
    let healthBoard: DestinationHealthBoard
    /// Started once the config names a health check.
    private var healthChecker: HealthChecker?
    /// Started by `startReporting` when the config has a `reporting` section; set on the main thread while
    /// the notification and API threads may already read it to wake it, hence the lock.
    private let startedReporter = Locked<Reporter?>(nil)
    var reporter: Reporter? { startedReporter.withLock { $0 } }
    private let reportingOffWatch = Locked<ReportingOffWatch?>(nil)
    /// Started by `startAPI` when the config has an `api` section.
    private var api: APIServer?
    /// Set by `takeNotifications` before `start` when the config has a `notifications` section: the loops
    /// read bodies on its path only.
    private(set) var notifications: NotificationIntake?
    /// Set by `takePaymentProviders` before `start` when the config names payment providers: the loops read
    /// bodies on their paths too.
    private(set) var payments: PaymentIntake?
    /// The destination sets logged as all down, to log each change once. Locked: the checker's thread and
    /// reloads (on the main thread) both update it.
    private let setsAllDown = Locked(Set<String>())

    /// Reads the config and pages again, for SIGHUP; nil when the server cannot reload.
    private let reloader: (@Sendable () throws -> ServingState)?

    package init(
        serving initial: ServingState, store: any TokenStore, settings: ServerSettings, logger: Logger,
        healthBoard: DestinationHealthBoard = DestinationHealthBoard(),
        accessLogSink: LogSink? = nil, reloader: (@Sendable () throws -> ServingState)? = nil
    ) {
        self.healthBoard = healthBoard
        let gateway = initial.gateway
        self.accessLog = accessLogSink.map { AccessLog(sink: $0, clients: gateway.config.accessLog.clients, operatorLogger: logger) }
        self.metrics = GatewayMetrics(version: linkoutVersion)
        var serving = initial
        serving.linkMetrics = metrics.linkMetrics(for: gateway.config.links)
        self.servingState = Locked(serving)
        self.reloader = reloader
        self.settings = settings
        self.logger = logger
        self.unroutedLog = UnroutedLog(logger: logger)
        self.outageReporter = store as? any StoreOutageReporting
        var commitDelay = Duration.zero
        if case .relaxed(let window) = settings.durability { commitDelay = .milliseconds(window) }
        self.writer = RecordWriter<ReplyTicket>(
            store: store, maxPending: settings.maxPendingRecords, commitDelay: commitDelay
        ) { [weak self] tickets, outcome in
            self?.deliver(tickets, outcome: outcome)
        }
    }

    /// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread, and so in every thread started after it:
    /// call it before anything starts a thread (opening the store starts the checkpointer), or a signal
    /// may land in a thread that does not wait for it and kill the process with its default action.
    package static func blockHandledSignals() {
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        sigaddset(&mask, SIGINT)
        sigaddset(&mask, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }

    /// Binds the listeners and starts the writer and the loop threads. Returns the bound address (with
    /// the real port when the configured one was 0).
    package func start() throws -> ListenAddress {
        // Writes to a socket the client already closed must fail with EPIPE, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        // Every thread started from here inherits a mask that blocks these, so only `runUntilSignalled` sees them.
        Self.blockHandledSignals()

        raiseOpenFileLimit()
        let threadCount = settings.threads > 0 ? settings.threads : ProcessInfo.processInfo.activeProcessorCount
        var bound = settings.listen
        for index in 0..<threadCount {
            let loop = try EventLoop(index: index, loopCount: threadCount, server: self, listen: bound)
            if index == 0 { bound.port = loop.boundPort }
            loops.append(loop)
        }
        if let adminListen = settings.adminListen {
            let admin = try AdminServer(server: self, listen: adminListen, dashboard: dashboard)
            adminAddress = ListenAddress(host: adminListen.host, port: admin.boundPort)
            self.admin = admin
            admin.start()
        }
        accessLog?.start()
        writer.start()
        notifications?.start()
        payments?.start()
        startHealthChecks(serving.gateway)
        // No dash before the index: with up to 256 loops, `linkout-loop255` still fits the kernel's 15 bytes.
        loopThreads = loops.map { loop in
            let thread = WorkerThread(name: "linkout-loop\(loop.index)")
            thread.start { loop.run() }
            return thread
        }
        return bound
    }

    /// Every connection is a descriptor, and the usual soft limit (1024) would cap the gateway far below
    /// what it can hold: raise it to the hard limit the system allows.
    private func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let target = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < target {
            limit.rlim_cur = target
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
                logger.warning("cannot raise the open-file limit", metadata: ["limit": "\(limit.rlim_cur)"])
                return
            }
        }
        logger.info("open-file limit", metadata: ["limit": "\(limit.rlim_cur)"])
    }

    /// Blocks until SIGTERM or SIGINT, then drains: `/readyz` turns 503, the grace period passes with
    /// everything still served, accepting stops, in-flight requests finish, and the store is flushed.
    /// SIGHUP meanwhile reloads the config.
    package func runUntilSignalled() {
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        sigaddset(&mask, SIGINT)
        sigaddset(&mask, SIGHUP)
        var received: Int32 = 0
        while true {
            sigwait(&mask, &received)
            guard received == SIGHUP else { break }
            reload()
        }
        logger.notice("draining", metadata: ["signal": "\(received == SIGTERM ? "SIGTERM" : "SIGINT")",
                                             "graceSeconds": "\(settings.drainGraceSeconds)"])
        draining.store(true, ordering: .sequentiallyConsistent)
        if settings.drainGraceSeconds > 0 {
            Thread.sleep(forTimeInterval: settings.drainGraceSeconds)
        }
        stop()
    }

    /// Reads the config again and, if it is valid, hands every loop the new rules and pages; otherwise logs
    /// why and keeps serving the old ones. Connections stay open either way.
    package func reload() {
        // Log rotation renames the file and sends SIGHUP: write to a fresh one from now on.
        accessLog?.reopen()
        guard let reloader else {
            logger.warning("SIGHUP ignored: this server was started without a config file to reload")
            return
        }
        var state: ServingState
        do {
            state = try reloader()
            state.linkMetrics = metrics.linkMetrics(for: state.gateway.config.links)
        } catch {
            logger.error("config reload refused; still serving the previous config", metadata: ["problems": "\(error)"])
            return
        }
        if state.gateway.config.server != settings {
            logger.warning("server settings changed in the config; they take effect only on a restart")
        }
        if state.gateway.config.accessLog != serving.gateway.config.accessLog {
            logger.warning("accessLog settings changed in the config; they take effect only on a restart")
        }
        let previousTargets = serving.gateway.healthTargets
        serving = state
        for loop in loops { loop.install(state) }
        healthBoard.retain(only: state.gateway.healthTargets)
        if let healthChecker {
            healthChecker.update(settings: state.gateway.config.healthChecks)
            // Targets the reload added get their series now, not at their first change.
            for target in state.gateway.healthTargets.subtracting(previousTargets) {
                metrics.destinationUp(target.url).record(healthBoard.slot(for: target).isUp ? 1 : 0)
            }
        } else {
            startHealthChecks(state.gateway)
        }
        // A reload may leave a set with every destination down (or none): say so now.
        reportSetsAllDown(state.gateway)
        logger.notice("config reloaded", metadata: ["links": "\(state.gateway.config.links.count)"])
    }

    /// Stops accepting, lets every loop answer what it has in flight, then flushes the store.
    package func stop() {
        draining.store(true, ordering: .sequentiallyConsistent)
        for loop in loops { loop.requestStop() }
        for thread in loopThreads { thread.join() }
        // After the loops: each waited for its parked notifications to be answered.
        notifications?.stop()
        payments?.stop()
        writer.finish()
        healthChecker?.stop()
        api?.stop()
        reporter?.stop()
        reportingOffWatch.withLock { $0 }?.stop()
        // The access log before the admin listener: stopping that waits for a dashboard count in progress
        // (seconds on a large store), and a service manager's stop timeout must not cost logged lines.
        accessLog?.stop()
        admin?.stop()
        logger.notice("stopped", metadata: ["committedVisits": "\(writer.currentStatus.committedVisits)"])
    }

    /// Reports every token to Apple from now on, on the reporter's own thread (`reporting` in the config).
    /// The store is the reporter's own connection; call after `start`.
    package func startReporting(settings: ReportingSettings, store: any ReportingStore) throws {
        let reporter = try Reporter(settings: settings, store: store, logger: logger, metrics: metrics)
        reporter.start()
        startedReporter.withLock { $0 = reporter }
    }

    /// With no `reporting` section: keeps the token gauges counting beside `linkout_reporting_enabled` 0,
    /// and says in the log how many tokens are not reported. `config` names the file to add the section to.
    package func watchReportingOff(store: any ReportingStore, config: String) {
        let watch = ReportingOffWatch(store: store, metrics: metrics.reporting, logger: logger, config: config)
        watch.start()
        reportingOffWatch.withLock { $0 = watch }
    }

    /// Takes Apple's notifications on `settings.path` of the shoppers' listener (`notifications` in the
    /// config), verified by `verifier` and recorded in `store` (the intake thread's own connection). Call
    /// before `start`: the loops size their body limit by it.
    package func takeNotifications(settings: NotificationSettings, verifier: NotificationVerifier, store: any ReportingStore) {
        notifications = NotificationIntake(
            settings: settings, verifier: verifier, store: store, logger: logger, metrics: metrics.notifications,
            deliver: { [weak self] loop, reply in self?.loops[loop].post(reply) },
            wakeReporter: { [weak self] in self?.reporter?.wake() })
    }

    /// Takes the payment providers' webhooks on their paths of the shoppers' listener (`paymentProviders`
    /// in the config, with the secrets read), stored in `store` (the intake thread's own connection). Call
    /// before `start`, as `takeNotifications`.
    package func takePaymentProviders(settings: PaymentProvidersSettings, store: any ReportingStore) {
        guard !settings.providers.isEmpty else { return }
        payments = PaymentIntake(
            settings: settings, store: store, logger: logger, metrics: metrics.providers,
            deliver: { [weak self] loop, provider, reply in self?.loops[loop].post(webhook: reply, provider: provider) },
            wakeReporter: { [weak self] in self?.reporter?.wake() })
    }

    /// Opens the checkout's listener (`api` in the config): `POST /v1/line-items`. Returns where it is
    /// bound (the real port when 0 was asked for).
    package func startAPI(settings: APISettings, keys: APIKeys, intake: LineItemIntake, registrationStore: any ReportingStore) throws -> ListenAddress {
        let registrations = TokenRegistrationIntake(
            store: registrationStore, config: { [unowned self] in serving.gateway.config }, record: { [unowned self] in try record($0) })
        let api = try APIServer(settings: settings, keys: keys, intake: intake, registrations: registrations, logger: logger) { [weak self] in
            self?.reporter?.wake()
        }
        api.start()
        self.api = api
        return ListenAddress(host: settings.listen.host, port: api.boundPort)
    }

    /// Starts checking destinations' health, off the loop threads, once the config names a check.
    private func startHealthChecks(_ gateway: Gateway) {
        guard healthChecker == nil, !gateway.healthTargets.isEmpty else { return }
        for target in gateway.healthTargets { metrics.destinationUp(target.url).record(1) }
        let checker = HealthChecker(board: healthBoard, settings: gateway.config.healthChecks, logger: logger) { [weak self] target, up in
            self?.healthChanged(target, up: up)
        }
        checker.start()
        healthChecker = checker
    }

    /// On the checker's thread, after a destination went down or came up: the gauge, and a log line for
    /// each destination set that now has no destination up, or has one again.
    private func healthChanged(_ target: HealthTarget, up: Bool) {
        metrics.destinationUp(target.url).record(up ? 1 : 0)
        // The dashboard's up/down periods: in the store, with the writer's next batch.
        writer.noteHealth(target: target.url, up: up, at: TimeSource.system.nowMs())
        reportSetsAllDown(serving.gateway)
    }

    /// Logs each destination set that has come to have no destination up, or has one again.
    private func reportSetsAllDown(_ gateway: Gateway) {
        let down = gateway.setsWithEveryDestinationDown(atMs: TimeSource.system.nowMs())
        let names = Set(down.map(\.name))
        setsAllDown.withLock { logged in
            for (name, instead) in down where !logged.contains(name) {
                logger.error("every destination of a link is down; redirecting to a fallback", metadata: ["set": "\(name)", "instead": "\(instead)"])
            }
            for name in logged.subtracting(names) {
                logger.notice("a destination of a link is up again", metadata: ["set": "\(name)"])
            }
            logged = names
        }
    }

    /// Ready: not draining, the last commit did not fail, and nothing has waited on the store too long.
    /// What `/readyz` answers, on the gateway's listeners and the admin listener alike.
    struct Readiness {
        var ready: Bool
        /// Ready, but spooling a PostgreSQL outage: `X-Linkout-Degraded: spool`.
        var degraded = false
        var why: String

        var status: Int32 { ready ? 200 : 503 }
        var phrase: String { ready ? "OK" : "Service Unavailable" }
    }

    func readiness() -> Readiness {
        if draining.load(ordering: .relaxed) { return Readiness(ready: false, why: "draining") }
        let status = writer.currentStatus
        if status.failing { return Readiness(ready: false, why: "store failing") }
        // Spooling still records every visit durably: stay in rotation, and say so for monitoring.
        if let outage = outageReporter?.outageStatus, outage.degraded {
            let what = outage.spooling ? "spooling" : "replaying spool"
            return Readiness(ready: true, degraded: true, why: "degraded: \(what) (\(outage.spooledVisits) visits waiting)")
        }
        if status.oldestPendingSince != 0,
           TimeSource.system.monotonicNanoseconds() &- status.oldestPendingSince > stuckAfterNanoseconds {
            return Readiness(ready: false, why: "store stalled")
        }
        return Readiness(ready: true, why: "ready")
    }

    /// Records tokens that did not come through a loop (the API's registrations) by the writer, as a
    /// link-out's visit is, and waits for their commit: when it returns they are committed (or, on
    /// PostgreSQL in an outage, in the spool), the same guarantee a strict redirect has. Throws when the
    /// queue is full or closing, or the commit failed: then the caller answers 503.
    package func record(_ records: [TokenRecord], timeout: TimeInterval = 30) throws {
        let waiter = CommitWaiter(count: records.count)
        for (index, record) in records.enumerated() where !writer.submit(.token(record), ticket: .waiting(on: waiter)) {
            // The ones not queued will never be told of: count them off so the wait ends with the others.
            let refused = ServerError("the writer refused the visits (its queue is over server.maxPendingRecords, or it is stopping)")
            for _ in index..<records.count { waiter.done(refused) }
            break
        }
        try waiter.wait(timeout: timeout)
    }

    /// Runs on the writer thread: hands each committed ticket back to the loop that owns its request.
    private func deliver(_ tickets: [ReplyTicket], outcome: CommitOutcome) {
        let error = outcome.error
        metrics.commitDuration.recordNanoseconds(Int64(outcome.nanoseconds))
        metrics.commitBatchSize.record(tickets.count)
        if error != nil { metrics.commitFailures.increment() }
        var perLoop = [[ReplyTicket]](repeating: [], count: loops.count)
        var alreadyAnswered = 0
        for ticket in tickets {
            if let waiter = ticket.waiter {
                waiter.done(error)
            } else if ticket.isAnswered {
                alreadyAnswered += 1
            } else {
                perLoop[ticket.loop].append(ticket)
            }
        }
        if let error {
            logger.error("store commit failed; answering 503", metadata: [
                "visits": "\(tickets.count - alreadyAnswered)", "error": "\(error)",
            ])
            if alreadyAnswered > 0 {
                // Relaxed durability: these shoppers were redirected before the commit that just failed.
                logger.critical("relaxed durability: visits redirected before commit were not recorded", metadata: [
                    "visits": "\(alreadyAnswered)", "error": "\(error)",
                ])
            }
        }
        for (index, batch) in perLoop.enumerated() where !batch.isEmpty {
            loops[index].post(batch, committed: error == nil)
        }
    }
}
