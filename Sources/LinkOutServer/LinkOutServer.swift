import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// The running gateway, assembled in one place. `init` opens the stores and builds every part from a
/// `ServeSetup`, in the order they depend on each other: the loops' mailboxes first, then the writer and
/// the threads that answer through them, then the listeners with their routes. `start` binds every
/// listener and starts the parts in the order `parts` lists them; `stop` stops them in reverse. Each
/// concern lives in its own folder: commit delivery (`Gateway/`), readiness and the destinations' health
/// (`Health/`), reload, signals and limits (`Lifecycle/`); no part holds the server.
package final class LinkOutServer: @unchecked Sendable {
    private let setup: ServeSetup
    private let logger: Logger
    private let metrics: GatewayMetrics
    /// What the loops start with; reloads hand each loop a new one. Written by reloads on the main thread,
    /// read by the health checker's, the API's and the admin listener's, hence locked.
    private let serving: Locked<ServingState>
    private let writer: RecordWriter<ReplyTicket>
    private let readiness: ReadinessCheck
    private let health: HealthWatch
    private let loops: ShopperLoops
    private let admin: AdminServer?
    private let api: APIServer?
    private let reload: ConfigReload
    private let accessLog: AccessLog?
    /// Every part with a life of its own, in starting order.
    private var parts = ServerParts()
    /// Where each listener is bound, once `start` bound it.
    private let bound = Locked(Listening(main: ListenAddress(host: "", port: 0)))

    /// Opens the store and a connection for each part that reads or writes it on its own thread, and
    /// builds the parts the config turns on. Nothing is bound or started yet: `start` does that. Throws,
    /// naming what, when a store cannot be opened or a part cannot be built.
    package init(_ setup: ServeSetup) throws {
        let config = setup.config, logger = setup.logger, clock = setup.clock
        self.setup = setup
        self.logger = logger
        let metrics = GatewayMetrics(version: linkoutVersion)
        self.metrics = metrics
        let accessLog = setup.accessLogSink.map {
            AccessLog(sink: $0, clients: config.accessLog.clients, operatorLogger: logger, clock: clock)
        }
        self.accessLog = accessLog
        let board = DestinationHealthBoard()
        var initial = ServingState(config: config, files: setup.files, health: board)
        initial.linkMetrics = metrics.linkMetrics(for: config.links)
        let serving = Locked(initial)
        self.serving = serving
        reload = ConfigReload(
            reread: setup.reread, restartOnly: RestartOnlySettings(config), health: board, metrics: metrics, logger: logger)
        func connection(for part: String) throws -> any ReportingStore {
            try openReportingStore(for: part, config: config, logger: logger)
        }

        // The loops' mailboxes, then the writer, which answers strict link-outs through them.
        let threads = config.server.threads > 0 ? config.server.threads : ProcessInfo.processInfo.activeProcessorCount
        let mailboxes = try LoopMailboxes.shoppers(count: threads, config: config, clock: clock)
        let tokenStore: any TokenStore
        do {
            tokenStore = try openStoreForServing(config.store, outage: config.storeOutage, spoolPath: setup.spoolPath, logger: logger)
        } catch {
            throw ServerError("cannot open the store: \(error)")
        }
        var commitDelay = Duration.zero
        if case .relaxed(let window) = config.server.durability { commitDelay = .milliseconds(window) }
        let delivery = CommitDelivery(mailboxes: mailboxes, metrics: metrics, logger: logger) { serving.withLock { $0.pages.catalog } }
        let writer = RecordWriter<ReplyTicket>(
            store: tokenStore, maxPending: config.server.maxPendingRecords, commitDelay: commitDelay, clock: clock,
            onCommit: delivery.deliver)
        self.writer = writer
        let outage = tokenStore as? any StoreOutageReporting
        let readiness = ReadinessCheck(
            writerStatus: {
                let status = writer.currentStatus
                return .init(failing: status.failing, oldestPendingSince: status.oldestPendingSince)
            }, outage: outage, clock: clock)
        self.readiness = readiness
        health = HealthWatch(
            board: board, metrics: metrics, logger: logger, clock: clock, noteHealth: { writer.noteHealth(target: $0, up: $1, at: $2) },
            gateway: { serving.withLock { $0.gateway } })

        // The threads that work for the listeners: reporting (or the watch that says it is off), the
        // intakes of Apple's notifications and the providers' webhooks, Apple's notification history.
        let reporting = try ReportingPart(setup: setup, metrics: metrics, connection: connection)
        let wake: @Sendable () -> Void = { [reporter = reporting.reporter] in reporter?.wake() }
        let notifications = try config.notifications.flatMap { settings in
            try setup.files.notificationVerifier.map { verifier in
                NotificationIntake(
                    settings: settings, verifier: verifier, store: try connection(for: "the notification intake"), logger: logger,
                    metrics: metrics.notifications, deliver: { mailboxes.deliver(NotificationRoute.answer($1), to: $0) },
                    wakeReporter: wake,
                    clock: clock)
            }
        }
        let history = try NotificationHistoryFetcher.forServe(
            setup: setup, metrics: metrics.notifications, connection: connection, wakeReporter: wake)
        let payments =
            config.paymentProviders.providers.isEmpty
            ? nil
            : PaymentIntake(
                settings: config.paymentProviders, store: try connection(for: "the payment providers' webhooks"), logger: logger,
                metrics: metrics.providers, deliver: { mailboxes.deliver(WebhookRoute.answer($2, provider: $1), to: $0) },
                wakeReporter: wake,
                clock: clock)

        // The listeners: the shoppers' (a route per public path), the admin one, the API.
        let services = LinkOutServices(
            settings: config.server, submit: { writer.submit($0, ticket: $1, wake: $2) }, wakeWriter: { writer.wake() },
            noteRefusal: { writer.noteRefusal(link: $0, reason: $1, at: $2) }, readiness: { readiness.current() },
            metrics: metrics, unroutedLog: UnroutedLog(logger: logger), clock: clock)
        loops = ShopperLoops(
            mailboxes: mailboxes, serving: initial,
            routes: { loop in
                var exact: [(path: [UInt8], route: any ShopperRoute)] = []
                if let notifications {
                    let route = NotificationRoute(intake: notifications, loop: loop, loopCount: threads, clock: clock)
                    exact.append((route.path, route))
                }
                for provider in config.paymentProviders.providers {
                    if let payments {
                        let route = WebhookRoute(intake: payments, provider: provider, loop: loop)
                        exact.append((route.path, route))
                    }
                }
                return ShopperRoutes(
                    exact: exact, fallback: LinkOutRoute(loop: loop, loopCount: threads, serving: initial, services: services))
            }, metrics: metrics, accessLog: accessLog, logger: logger, released: PortSharing.withdraw)
        admin = try AdminServer.forServe(
            setup: setup,
            sources: AdminSources(
                metricsText: { metrics.render(queueDepth: writer.currentStatus.pending, outage: outage?.outageStatus) },
                readiness: { readiness.current() }, serving: { serving.withLock { $0 } }))
        api = try APIServer.forServe(
            setup: setup, serving: serving, metrics: metrics, connection: connection,
            record: { try writer.recordAndWait($0, counted: metrics.registeredTokens, clock: clock) }, wakeReporter: wake)

        // Starting order; `stop` goes backwards. A part starts after what it hands work to: the admin
        // listener first and last to go (the operator sees the drain), the writer before everything that
        // records through it, the loops last, once everything they hand requests to runs. The access log
        // stops before the admin listener: that waits for a dashboard count in progress (seconds on a large
        // store), and a service manager's stop timeout must not cost logged lines.
        let bound = bound
        if let admin { parts.add(ListenerPart(admin) { bound.withLock { $0.admin } }) }
        let optional: [(any ServerPart)?] = [
            accessLog, WriterPart(writer), reporting.reporter, reporting.offWatch, api.map { ListenerPart($0) { bound.withLock { $0.api } } },
            notifications, history, payments, health, loops,
        ]
        for part in optional { if let part { parts.add(part) } }
    }

    /// The parts' names in starting order (the test that pins it reads this).
    var partNames: [String] { parts.names }

    /// First, before any thread exists: a signal must only ever reach the thread that waits for it.
    package static func blockHandledSignals() { HandledSignals.block() }

    /// Binds the listeners, then starts every part in order, and says where it listens to the other
    /// linkouts of this host (`PortSharing`). Returns the bound addresses (the real ports when the config
    /// asked for 0). A part that cannot start stops the others and throws, naming it.
    package func start() throws -> Listening {
        // Every thread started from here inherits a mask that blocks these, so only `runUntilSignalled` sees them.
        HandledSignals.block()
        OpenFileLimit.raise(logger: logger)
        let settings = setup.config.server
        // Bind everything first: a port taken fails here, before any thread starts.
        var listening = Listening(main: try loops.bind(settings.listen))
        if let admin, let listen = settings.adminListen { listening.admin = ListenAddress(host: listen.host, port: try admin.bind(listen)) }
        if let api, let listen = setup.config.api?.listen { listening.api = ListenAddress(host: listen.host, port: try api.bind()) }
        bound.withLock { $0 = listening }
        try parts.startAll()
        try PortSharing.claim(
            listening, asked: [settings.listen, settings.adminListen, setup.config.api?.listen].compactMap { $0 }, store: setup.config.store
        ) {
            stop()
        }
        return listening
    }

    /// Blocks until SIGTERM or SIGINT, then drains: `/readyz` turns 503, the grace period passes with
    /// everything still served, accepting stops, in-flight requests finish, and the store is flushed.
    /// SIGHUP meanwhile reloads the config.
    package func runUntilSignalled() {
        let signal = HandledSignals.waitForStop { reloadConfig() }
        let grace = setup.config.server.drainGraceSeconds
        logger.notice("draining", metadata: ["signal": "\(signal)", "graceSeconds": "\(grace)"])
        readiness.drain()
        if grace > 0 { Thread.sleep(forTimeInterval: grace) }
        stop()
    }

    /// SIGHUP: the log file reopened (rotation renamed it), then the new rules, pages and keys to every
    /// loop if the config is valid (`ConfigReload`), and the health checks brought in line.
    package func reloadConfig() {
        accessLog?.reopen()
        guard let state = reload.next() else { return }
        let previous = serving.withLock { current in
            defer { current = state }
            return current.gateway
        }
        loops.install(state)
        health.reloaded(to: state.gateway, from: previous)
        logger.notice("config reloaded", metadata: ["links": "\(state.gateway.config.links.count)"])
    }

    /// Stops accepting, lets every loop answer what it has in flight, then stops the other parts in the
    /// reverse of their starting order: the writer commits what is queued after everything that records.
    package func stop() {
        readiness.drain()
        parts.stopAll()
        logger.notice("stopped", metadata: ["committedVisits": "\(writer.currentStatus.committedVisits)"])
    }
}
