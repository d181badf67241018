import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Reads Apple's notification history back (`NotificationHistory`) for every configured app, production and
/// sandbox: at start-up, so a gap while linkout was down is covered, then daily; an hour after a fetch that
/// failed. Each notification goes the way a pushed one does (the verifier, then `NotificationTaker`), so one
/// Apple pushed and the history returns again is taken once. Its own thread and store connection: it waits
/// on Apple and never on a shopper's path.
final class NotificationHistoryFetcher: @unchecked Sendable {
    private let settings: NotificationSettings
    private let verifier: NotificationVerifier
    private let client: AppleReportClient
    private let store: any NotificationStore
    private let bundleIds: [String]
    private let logger: Logger
    private let taker: NotificationTaker
    /// The time of day: when fetches are due, the span asked for, the JWTs.
    private let clock: TimeSource
    /// Looks every few minutes whether a fetch is due; the fetches themselves are daily.
    private let worker = PeriodicWorker(name: "linkout-history", interval: 300)
    /// When each app's and environment's next fetch is due (Unix ms); absent: at once.
    private var dueAt: [String: Int64] = [:]
    /// Set by `stop`: a fetch ends at its next page (its span left unmarked, so the next start reads it
    /// again), rather than hold serve's stop for every page of a long history.
    private let stopping = Locked(false)

    /// What one fetch of one app and environment did.
    struct Fetch: Equatable {
        var pages = 0
        var notifications = 0
        /// Those not taken before (pushed and recorded already, or read in an earlier fetch).
        var new = 0
        var refused = 0
        /// Why it stopped before the last page; nil when every page was read and the span is covered.
        var failure: String?
    }

    init(
        settings: NotificationSettings, reporting: ReportingSettings, verifier: NotificationVerifier, store: any NotificationStore,
        apps: [AllowedApp], logger: Logger, metrics: NotificationMetrics, wakeReporter: @escaping @Sendable () -> Void,
        clock: TimeSource
    ) throws {
        self.settings = settings
        self.verifier = verifier
        self.client = try AppleReportClient(settings: reporting)
        self.store = store
        self.bundleIds = Array(Set(apps.map(\.bundleId))).sorted()
        self.logger = logger
        self.taker = NotificationTaker(logger: logger, metrics: metrics, wakeReporter: wakeReporter, clock: clock)
        self.clock = clock
    }

    func start() {
        worker.start { [self] in
            fetchDue(now: clock.nowMs())
            return false
        }
    }

    func stop() {
        stopping.withLock { $0 = true }
        worker.stop()
    }

    /// Every app and environment whose fetch is due.
    func fetchDue(now: Int64) {
        for bundleId in bundleIds {
            for environment in [TokenEnvironment.production, .sandbox] {
                let key = "\(bundleId) \(environment.rawValue)"
                guard dueAt[key].map({ now >= $0 }) ?? true else { continue }
                let fetch = self.fetch(bundleId: bundleId, environment: environment, now: now)
                dueAt[key] = now + (fetch.failure == nil ? NotificationHistory.intervalMs : NotificationHistory.retryMs)
            }
        }
    }

    /// Reads one app's and environment's history from where the last fetch ended, page by page, and marks it
    /// covered once the last page is taken. A page that fails leaves the mark where it was: the next fetch
    /// asks for the same span again, and what was taken meanwhile is taken once.
    func fetch(bundleId: String, environment: TokenEnvironment, now: Int64) -> Fetch {
        var fetch = Fetch()
        let covered: Int64?
        do {
            covered = try store.notificationHistoryMarks().first { $0.bundleId == bundleId && $0.environment == environment }?.coveredUntil
        } catch {
            fetch.failure = "the store: \(error)"
            return log(fetch, bundleId: bundleId, environment: environment, span: nil)
        }
        let span = NotificationHistory.span(
            coveredUntil: covered, now: now, firstLookBackDays: settings.historyFirstLookBackDays, environment: environment)
        guard !span.isEmpty else { return log(fetch, bundleId: bundleId, environment: environment, span: span) }
        var paginationToken: String?
        repeat {
            if stopping.withLock({ $0 }) {
                fetch.failure = "serve is stopping; the span is read again at the next start"
                return fetch
            }
            let answer = client.notificationHistory(
                bundleId: bundleId, environment: environment, span: span, paginationToken: paginationToken, now: clock.nowMs())
            guard answer.status == 200, let page = NotificationHistory.parsePage(Array(answer.body.utf8)) else {
                fetch.failure = answer.status.map { "HTTP \($0) \(answer.body.prefix(300))" } ?? "no answer: \(answer.transportError)"
                return log(fetch, bundleId: bundleId, environment: environment, span: span)
            }
            fetch.pages += 1
            for payload in page.signedPayloads {
                fetch.notifications += 1
                let screened: ScreenedNotification
                do throws(NotificationRefusal) {
                    screened = try verifier.screen(body: NotificationHistory.notificationBody(payload))
                } catch {
                    refused(error, &fetch)
                    continue
                }
                switch verifier.verifyWaiting(screened).result {
                case .failure(let refusal):
                    refused(refusal, &fetch)
                case .success(let verified):
                    do {
                        if try taker.take(verified, store: store, from: "Apple's history") != .duplicate { fetch.new += 1 }
                    } catch {
                        fetch.failure = "the store: \(error)"
                        return log(fetch, bundleId: bundleId, environment: environment, span: span)
                    }
                }
            }
            if page.hasMore, page.paginationToken == nil {
                fetch.failure = "Apple's page says there is more but gives no paginationToken"
                return log(fetch, bundleId: bundleId, environment: environment, span: span)
            }
            paginationToken = page.hasMore ? page.paginationToken : nil
        } while paginationToken != nil
        // A record that failed verification came from Apple's own API, so the likely cause is this config
        // (an app's appAppleId, the roots): the span stays unmarked and is read again once it is mended,
        // rather than pass over the notifications those records are.
        if fetch.refused > 0 {
            fetch.failure =
                "\(fetch.refused) record(s) failed verification (see the warnings above: check apps[].appAppleId and notifications.rootCertificates); the span is read again"
            return log(fetch, bundleId: bundleId, environment: environment, span: span)
        }
        do {
            try store.markNotificationHistory(bundleId: bundleId, environment: environment, coveredUntil: span.upperBound, now: now)
        } catch {
            fetch.failure = "the store: \(error)"
        }
        return log(fetch, bundleId: bundleId, environment: environment, span: span)
    }

    /// A record Apple's own history returned that does not verify is not Apple's (or not this app's): said,
    /// skipped, and the rest taken.
    private func refused(_ refusal: NotificationRefusal, _ fetch: inout Fetch) {
        fetch.refused += 1
        logger.warning(
            "notifications: a record of Apple's notification history failed verification; skipped",
            metadata: [
                "reason": "\(refusal.reason.rawValue)", "why": "\(refusal.detail)",
            ])
    }

    @discardableResult
    private func log(_ fetch: Fetch, bundleId: String, environment: TokenEnvironment, span: Range<Int64>?) -> Fetch {
        var metadata: Logger.Metadata = [
            "bundleId": "\(bundleId)", "environment": "\(environment.rawValue)", "pages": "\(fetch.pages)",
            "notifications": "\(fetch.notifications)", "new": "\(fetch.new)",
        ]
        if let span {
            metadata["from"] = "\(UTCDate.format(milliseconds: span.lowerBound))"
            metadata["to"] = "\(UTCDate.format(milliseconds: span.upperBound))"
        }
        if fetch.refused > 0 { metadata["refused"] = "\(fetch.refused)" }
        if let failure = fetch.failure {
            metadata["error"] = "\(failure)"
            logger.warning(
                "notifications: cannot read Apple's notification history; trying again in an hour (notifications missed while linkout was down are fetched then)",
                metadata: metadata)
        } else if fetch.new > 0 {
            logger.notice(
                "notifications: Apple's notification history held notifications linkout had not taken; taken now", metadata: metadata)
        } else {
            logger.info("notifications: Apple's notification history read; nothing missed", metadata: metadata)
        }
        return fetch
    }
}

extension NotificationHistoryFetcher: ServerPart {
    var partName: String { "Apple's notification history" }
}

extension NotificationHistoryFetcher {
    /// The fetcher `serve` runs when notifications, their `history` and reporting are all on (it asks
    /// Apple with reporting's key); nil otherwise, said in the log when `history` was turned off.
    static func forServe(
        setup: ServeSetup, metrics: NotificationMetrics, connection: (String) throws -> any ReportingStore,
        wakeReporter: @escaping @Sendable () -> Void
    ) throws -> NotificationHistoryFetcher? {
        let config = setup.config
        guard let settings = config.notifications, settings.history, let reporting = config.reporting,
            let verifier = setup.files.notificationVerifier
        else {
            if config.notifications?.history == false {
                setup.logger.warning(
                    "notifications.history is false: notifications Apple gave up sending while linkout was down (a day-10 UNREPORTED among them) are not fetched back from Apple's notification history"
                )
            }
            return nil
        }
        let store = try connection("Apple's notification history")
        do {
            return try NotificationHistoryFetcher(
                settings: settings, reporting: reporting, verifier: verifier, store: store, apps: config.apps, logger: setup.logger,
                metrics: metrics, wakeReporter: wakeReporter, clock: setup.clock)
        } catch {
            throw ServerError("cannot read Apple's notification history: \(error)")
        }
    }
}
