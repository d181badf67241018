import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore
import Logging
import Synchronization

/// The running gateway, assembled in one place: `init` opens the stores and builds every part from a
/// `ServeSetup`; `start` binds the listeners and starts the parts in the order `parts` lists them; `stop`
/// stops them in reverse. The shoppers' side is one event loop per thread, each with its own
/// SO_REUSEPORT listener (`HTTPLoop`), sharing one `ServingState` (swapped whole on reload) and one
/// group-commit writer.
package final class LinkOutServer: @unchecked Sendable {
    /// What the loops start with; reloads hand each loop a new one. Written by reloads on the main thread,
    /// read by the health checker's, the API's and the admin listener's, hence locked.
    private let servingState: Locked<ServingState>
    var serving: ServingState {
        get { servingState.withLock { $0 } }
        set { servingState.withLock { $0 = newValue } }
    }
    let settings: ServerSettings
    let logger: Logger
    private let setup: ServeSetup
    /// What a reload cannot change, as the server started with it.
    private let restartOnly: RestartOnlySettings
    private(set) var writer: RecordWriter<ReplyTicket>!
    private var loops: [GatewayResponder] = []
    private var loopThreads: [WorkerThread] = []
    /// Every part with a life of its own, in starting order (`start`).
    private var parts = ServerParts()

    let metrics: GatewayMetrics
    /// Says which paths unrouted tokens arrive on.
    let unroutedLog: UnroutedLog
    /// nil when the access log is off.
    let accessLog: AccessLog?
    private var admin: AdminServer?
    /// The operator dashboard on the admin listener (nil: no admin listener).
    private let dashboard: DashboardSettings?

    /// The store's outage state when it has an outage spool (PostgreSQL with `storeOutage.mode: spool`).
    let outageReporter: (any StoreOutageReporting)?

    /// Set on SIGTERM: `/readyz` answers 503 from then on.
    let draining = Atomic<Bool>(false)
    /// How long the oldest queued visit may wait before `/readyz` calls the store stuck.
    let stuckAfterNanoseconds: UInt64 = 5_000_000_000

    /// Destinations' health, shared with every `Gateway` this server runs (they read it per request),
    /// and kept across reloads.
    let healthBoard = DestinationHealthBoard()
    /// Started once the config names a health check (at start, or by the first reload that names one).
    private var healthChecker: HealthChecker?
    /// With a `reporting` section: sends every token to Apple on its own thread. The notification and API
    /// threads wake it.
    private let reporter: Reporter?
    /// Without one: keeps the token gauges counting and says what is not reported.
    private let reportingOffWatch: ReportingOffWatch?
    /// With an `api` section: the checkout's listener, bound by `start`.
    private var api: APIServer?
    private let lineItems: LineItemIntake?
    private let registrations: TokenRegistrationIntake?
    /// With a `notifications` section: the loops read bodies on its path only.
    let notifications: NotificationIntake?
    /// Apple's notification history, read back at start-up and daily (nil when notifications or their
    /// `history` are off).
    private let notificationHistory: NotificationHistoryFetcher?
    /// With payment providers: the loops read bodies on their paths too.
    let payments: PaymentIntake?
    /// The destination sets logged as all down, to log each change once. Locked: the checker's thread and
    /// reloads (on the main thread) both update it.
    private let setsAllDown = Locked(Set<String>())

    /// Opens the store and a connection for each part that reads or writes it on its own thread, and
    /// builds the parts the config turns on. Nothing is bound or started yet: `start` does that. Throws,
    /// naming what, when a store cannot be opened or a part cannot be built.
    package init(_ setup: ServeSetup) throws {
        let config = setup.config
        self.setup = setup
        self.settings = config.server
        self.logger = setup.logger
        self.restartOnly = RestartOnlySettings(config)
        self.metrics = GatewayMetrics(version: linkoutVersion)
        self.accessLog = setup.accessLogSink.map { AccessLog(sink: $0, clients: config.accessLog.clients, operatorLogger: setup.logger) }
        self.unroutedLog = UnroutedLog(logger: setup.logger)
        var serving = ServingState(config: config, files: setup.files, health: healthBoard)
        serving.linkMetrics = metrics.linkMetrics(for: config.links)
        self.servingState = Locked(serving)

        let store = config.store
        let timeoutMs = config.storeOutage.timeoutMs
        /// Each part's own connection: a notification never waits on the reporter's, nor a checkout on either.
        /// In spool mode serve starts while PostgreSQL is down, and so do these parts: each connects once the
        /// server answers, failing meanwhile as in any outage (the API and the intakes answer 503, the
        /// reporter tries again).
        func connection(for part: String) throws -> any ReportingStore {
            do {
                guard config.storeOutage.mode == .spool, case .postgres(let url) = StoreLocation(store) else {
                    return try openReportingStore(store, timeoutMs: timeoutMs)
                }
                let opened = try SQLReportingStore.connectingWhenReachable(postgresURL: url, timeoutMs: timeoutMs)
                if let unreachable = opened.unreachable {
                    setup.logger.warning("PostgreSQL unreachable at start; \(part) connects once it answers", metadata: ["error": "\(unreachable)"])
                }
                return opened.store
            } catch {
                throw ServerError("cannot open the store for \(part): \(error)")
            }
        }
        let tokenStore: any TokenStore
        do {
            tokenStore = try openStoreForServing(store, outage: config.storeOutage, spoolPath: setup.spoolPath, logger: setup.logger)
        } catch {
            throw ServerError("cannot open the store: \(error)")
        }
        self.outageReporter = tokenStore as? any StoreOutageReporting
        var commitDelay = Duration.zero
        if case .relaxed(let window) = config.server.durability { commitDelay = .milliseconds(window) }
        // The parts built here reach back into the server (to deliver, record, wake) through `handle`, which
        // points at it once it exists, at the end of this initialiser.
        let handle = ServerHandle()
        self.writer = RecordWriter<ReplyTicket>(
            store: tokenStore, maxPending: config.server.maxPendingRecords, commitDelay: commitDelay
        ) { tickets, outcome in handle.server?.deliver(tickets, outcome: outcome) }
        let wake: @Sendable () -> Void = { handle.server?.reporter?.wake() }

        // Reporting, or the watch that says it is off.
        if let reporting = config.reporting {
            let store = try connection(for: "the reporter")
            Self.logReportingState(store, logger: setup.logger)
            do {
                reporter = try Reporter(settings: reporting, store: store, logger: setup.logger, metrics: metrics)
            } catch {
                throw ServerError("cannot start reporting: \(error)")
            }
            reportingOffWatch = nil
        } else {
            reporter = nil
            setup.logger.warning("reporting is OFF: \(setup.configPath) has no reporting section, so no token is reported to Apple, which expects every one reported (docs/reporting.md)")
            // The tokens' gauges and the daily count in the log all the same; a store that cannot be opened
            // for it (PostgreSQL down at start) is said, and serving goes on.
            do {
                reportingOffWatch = ReportingOffWatch(store: try connection(for: "the reporting-off watch"), metrics: metrics.reporting, logger: setup.logger, config: setup.configPath)
            } catch {
                setup.logger.error("reporting is OFF, and its tokens cannot be counted: \(error)")
                reportingOffWatch = nil
            }
        }
        if config.api != nil {
            let store = try connection(for: "the API")
            lineItems = LineItemIntake(store: store, signing: { [servingState] in servingState.withLock { $0.gateway.signer } })
            registrations = TokenRegistrationIntake(
                store: store, config: { [servingState] in servingState.withLock { $0.gateway.config } },
                record: { records in
                    guard let server = handle.server else { throw ServerError("the server is stopping") }
                    try server.record(records)
                })
        } else {
            lineItems = nil
            registrations = nil
        }
        if let settings = config.notifications, let verifier = setup.files.notificationVerifier {
            notifications = NotificationIntake(
                settings: settings, verifier: verifier, store: try connection(for: "the notification intake"), logger: setup.logger,
                metrics: metrics.notifications,
                deliver: { loop, reply in handle.server?.loops[loop].post(reply) }, wakeReporter: wake)
        } else {
            notifications = nil
        }
        if let settings = config.notifications, settings.history, let reporting = config.reporting,
            let verifier = setup.files.notificationVerifier {
            do {
                notificationHistory = try NotificationHistoryFetcher(
                    settings: settings, reporting: reporting, verifier: verifier, store: try connection(for: "Apple's notification history"),
                    apps: config.apps, logger: setup.logger, metrics: metrics.notifications, wakeReporter: wake)
            } catch let error as ServerError {
                throw error
            } catch {
                throw ServerError("cannot read Apple's notification history: \(error)")
            }
        } else {
            notificationHistory = nil
            if config.notifications?.history == false {
                setup.logger.warning("notifications.history is false: notifications Apple gave up sending while linkout was down (a day-10 UNREPORTED among them) are not fetched back from Apple's notification history")
            }
        }
        if !config.paymentProviders.providers.isEmpty {
            payments = PaymentIntake(
                settings: config.paymentProviders, store: try connection(for: "the payment providers' webhooks"), logger: setup.logger,
                metrics: metrics.providers,
                deliver: { loop, provider, reply in handle.server?.loops[loop].post(webhook: reply, provider: provider) }, wakeReporter: wake)
        } else {
            payments = nil
        }
        if config.server.adminListen != nil, let missing = Dashboard.pagesProblem(setup.dashboardAssets) {
            setup.logger.warning("the dashboard is OFF: its pages were not found (\(missing)); /metrics and the /api/ answers are served, / answers 404. Set publicDir to a folder holding admin/dashboard.html, such as the clone's Public (docs/dashboard.md)")
        }
        // The dashboard reads the store on the admin thread's own connection, opened on its first request:
        // a chart never waits on the writer's connection, and a store not yet there does not stop serve.
        dashboard = config.server.adminListen == nil ? nil : DashboardSettings(
            assetsDirectory: setup.dashboardAssets,
            noPurchaseAfterMs: config.reporting?.noPurchaseAfterMs ?? ReportingSettings.defaultNoPurchaseAfterMs,
            gatherMs: config.reporting?.gatherMs ?? ReportingSettings.defaultGatherMs,
            reportingEnabled: config.reporting != nil
        ) { try openDashboardStore(store, timeoutMs: timeoutMs) }

        handle.server = self
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

    /// Binds the listeners, then starts every part in order, and says where it listens to the other
    /// linkouts of this host (`PortSharing`). Returns the bound addresses (the real ports when the config
    /// asked for 0). A part that cannot start stops the others and throws, naming it.
    package func start() throws -> Listening {
        // Writes to a socket the client already closed must fail with EPIPE, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        // Every thread started from here inherits a mask that blocks these, so only `runUntilSignalled` sees them.
        Self.blockHandledSignals()
        raiseOpenFileLimit()

        // Bind everything first: a port taken fails here, before any thread starts.
        let threadCount = settings.threads > 0 ? settings.threads : ProcessInfo.processInfo.activeProcessorCount
        var listening = Listening(main: settings.listen)
        let services = gatewayServices()
        for index in 0..<threadCount {
            let loop = try GatewayResponder(index: index, loopCount: threadCount, services: services)
            let port = try loop.bind(listening.main)
            if index == 0 { listening.main.port = port }
            loops.append(loop)
        }
        if let adminListen = settings.adminListen {
            let admin = try AdminServer(
                dashboard: dashboard,
                sources: AdminSources(
                    metricsText: { [unowned self] in metrics.render(queueDepth: writer.currentStatus.pending, outage: outageReporter?.outageStatus) },
                    readiness: { [unowned self] in readiness() },
                    serving: { [unowned self] in serving }))
            listening.admin = ListenAddress(host: adminListen.host, port: try admin.bind(adminListen))
            self.admin = admin
        }
        if let settings = setup.config.api, let lineItems, let registrations {
            let api = try APIServer(
                settings: settings, keys: { [unowned self] in serving.apiKeys }, intake: lineItems, registrations: registrations,
                logger: logger, metrics: metrics.api
            ) { [weak self] in self?.reporter?.wake() }
            listening.api = ListenAddress(host: settings.listen.host, port: try api.bind())
            self.api = api
        }

        // Starting order; `stop` goes backwards. A part starts after what it hands work to: the admin
        // listener first and last to go (the operator sees the drain), the writer before everything that
        // records through it, the loops last, once everything they hand requests to runs.
        // Each listener's beacon (`PortSharing`) is withdrawn as it stops: a port freed is not named as served.
        if let admin, let address = listening.admin {
            parts.add("the admin listener", start: admin.start, stop: { admin.stop(); PortSharing.withdraw(address) })
        }
        // The access log stops before the admin listener: that waits for a dashboard count in progress
        // (seconds on a large store), and a service manager's stop timeout must not cost logged lines.
        if let accessLog { parts.add("the access log", start: accessLog.start, stop: accessLog.stop) }
        parts.add("the store's writer", start: { [unowned self] in writer.start() }, stop: { [unowned self] in writer.finish() })
        if let reporter { parts.add("reporting", start: reporter.start, stop: reporter.stop) }
        if let reportingOffWatch { parts.add("the reporting-off watch", start: reportingOffWatch.start, stop: reportingOffWatch.stop) }
        if let api, let address = listening.api {
            parts.add("the API listener", start: api.start, stop: { api.stop(); PortSharing.withdraw(address) })
        }
        if let notifications { parts.add("Apple's notifications", start: notifications.start, stop: notifications.stop) }
        if let notificationHistory { parts.add("Apple's notification history", start: notificationHistory.start, stop: notificationHistory.stop) }
        if let payments { parts.add("the payment providers' webhooks", start: payments.start, stop: payments.stop) }
        parts.add("the health checks", start: { [unowned self] in startHealthChecks(serving.gateway) }, stop: { [unowned self] in healthChecker?.stop() })
        let mainAddress = listening.main
        parts.add("the event loops", start: { [unowned self] in
            // No dash before the index: with up to 256 loops, `linkout-loop255` still fits the kernel's 15 bytes.
            loopThreads = loops.map { loop in
                let thread = WorkerThread(name: "linkout-loop\(loop.index)")
                thread.start { loop.run() }
                return thread
            }
        }, stop: { [unowned self] in
            // Each loop answers what it has in flight, and waits for its parked notifications and webhooks.
            for loop in loops { loop.requestStop() }
            // Each loop closes its listener 50 ms from now and may then drain for seconds: the port is not
            // this process's to name from here (a newer linkout of the same store already serves it).
            PortSharing.withdraw(mainAddress)
            for thread in loopThreads { thread.join() }
        })
        try parts.startAll()

        // Said once every listener is bound, so a linkout started after this one sees what it would share.
        // Two started at the same moment with different stores both passed the pre-flight: each looks
        // again, and one that finds the other leaves (both may: neither then splits the shoppers).
        let store = setup.config.store
        PortSharing.announce(listening.all, store: store)
        // A port the kernel chose (0 asked for) is shared with no listener: only ports the config named are
        // looked at again (`sharesPort` matches no port 0).
        let asked = [settings.listen, settings.adminListen, setup.config.api?.listen].compactMap { $0 }
        for address in listening.all where asked.contains(where: { Preflight.sharesPort($0, address) }) {
            // Only another store's beacon counts now: this process's own socket listens there too.
            guard case .otherStore = PortSharing.verdict(address, store: store), let problem = PortSharing.problem(address, store: store) else { continue }
            stop()
            throw ServerError(problem)
        }
        return listening
    }

    /// What each gateway loop is handed: the few parts it uses, not the server.
    private func gatewayServices() -> GatewayServices {
        let writer = writer!
        return GatewayServices(
            serving: serving, settings: settings,
            submit: { record, ticket, wake in writer.submit(record, ticket: ticket, wake: wake) },
            wakeWriter: { writer.wake() },
            noteRefusal: { link, reason, at in writer.noteRefusal(link: link, reason: reason, at: at) },
            readiness: { [unowned self] in readiness() },
            metrics: metrics, unroutedLog: unroutedLog, accessLog: accessLog, notifications: notifications, payments: payments,
            logger: logger)
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
        logger.info("open-file limit: \(limit.rlim_cur) descriptors (one per connection)")
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

    /// Reads the config and the files it names again and, if they are valid, hands every loop the new
    /// rules, pages and keys; otherwise logs why and keeps serving the old ones. Connections stay open
    /// either way. What only a restart changes (`RestartOnlySettings`) is named in a warning.
    package func reload() {
        // Log rotation renames the file and sends SIGHUP: write to a fresh one from now on.
        accessLog?.reopen()
        guard let reread = setup.reread else {
            logger.warning("SIGHUP ignored: this server was started without a config file to reload")
            return
        }
        var state: ServingState
        let config: GatewayConfig
        do {
            config = try reread()
            var problems: [String] = []
            // Everything that can fail first: the gateway registers its health targets on the board.
            let files = ConfigFiles.read(config, problems: &problems)
            guard problems.isEmpty else { throw PreflightError(problems: problems) }
            state = ServingState(config: config, files: files, health: healthBoard)
            state.linkMetrics = metrics.linkMetrics(for: config.links)
        } catch {
            logger.error("config reload refused; still serving the previous config", metadata: ["problems": "\(error)"])
            return
        }
        let waiting = restartOnly.changed(in: RestartOnlySettings(config))
        if !waiting.isEmpty {
            logger.warning("settings changed in the config take effect only on a restart: \(waiting.joined(separator: ", "))")
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

    /// Stops accepting, lets every loop answer what it has in flight, then stops the other parts in the
    /// reverse of their starting order: the writer commits what is queued after everything that records.
    package func stop() {
        draining.store(true, ordering: .sequentiallyConsistent)
        parts.stopAll()
        logger.notice("stopped", metadata: ["committedVisits": "\(writer.currentStatus.committedVisits)"])
    }

    /// At start-up, what the outbox holds from before: a paused reporter, reports waiting to be sent again
    /// and why, so the operator sees it where they look first.
    private static func logReportingState(_ store: any ReportingStore, logger: Logger) {
        guard let health = try? store.health(now: TimeSource.system.nowMs(), waitingLimit: 0) else { return }
        if let until = health.pausedUntil {
            logger.critical("reporting is PAUSED until \(UTCDate.format(milliseconds: until)): Apple refused the key (401) before this start; check reporting.keyFile, keyId, issuerId and the apps' bundle IDs")
        }
        if let refused = try? store.refusedCount(), refused.count > 0 {
            logger.warning("reporting is on, and \(RefusedReportsText.line(refused))")
        }
        guard health.open > 0 else {
            logger.notice("reporting is on: no report waiting")
            return
        }
        var metadata: Logger.Metadata = [
            "toSend": "\(health.toSend)", "retrying": "\(health.retrying + health.sending)",
        ]
        if let next = health.nextTryAt { metadata["nextTry"] = "\(UTCDate.format(milliseconds: next))" }
        if let error = health.lastError { metadata["lastError"] = "\(error.answer.prefix(300))" }
        logger.notice("reporting is on: reports waiting in the outbox (linkout report status lists them)", metadata: metadata)
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
        for (index, record) in records.enumerated() {
            guard writer.submit(.token(record), ticket: .waiting(on: waiter)) else {
                // The ones not queued will never be told of: count them off so the wait ends with the others.
                let refused = ServerError("the writer refused the visits (its queue is over server.maxPendingRecords, or it is stopping)")
                for _ in index..<records.count { waiter.done(refused) }
                break
            }
            // Counted when handed over, as a link's visits are (a failed commit shows as a commit failure).
            metrics.registeredTokens.increment()
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
