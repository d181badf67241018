import CLibcurl
import Foundation
import LinkOutCore
import LinkOutStore
import Logging
import Synchronization

/// Checks every target on a `DestinationHealthBoard`, on a thread of its own, and writes the results into
/// the targets' slots, which the event loops read per request.
///
/// One round checks all targets at once through one curl multi handle, so a round lasts at most one
/// timeout however many targets there are, and rounds start `intervalMs` apart. A check passes on a
/// status from 200 to 399 within `timeoutMs` for the whole exchange (DNS, connect, TLS, the answer, and a
/// GET's body up to `bodyCap`, where reading stops); redirects are not followed (a 3xx says the origin
/// answers). TLS is always verified, peer and host name, against `caFile` when set, else the system's CAs:
/// a destination with a bad certificate is as unusable to a shopper's browser as one that is down.
///
/// Stopping abandons checks in flight at once. Host names are looked up in libcurl's resolver threads; with
/// CURLOPT_QUICK_EXIT, a check abandoned mid-lookup (timed out, or stopped) leaves that thread to finish
/// on its own rather than waiting for a slow DNS server, which would stretch the round or `stop()`.
///
/// Checks go out directly: proxies named in the environment (`https_proxy` and the like) are ignored,
/// since what matters is whether this host reaches the destination, and a proxy's answer would hide that.
/// Every check opens a fresh connection, so a listener that went away is not hidden by a kept-alive one.
///
/// Package access so the executable may own it beside the server; `onTransition` runs on the checker's thread.
///
/// The loop waits in `curl_multi_poll`, which `curl_multi_wakeup` interrupts from any thread: `stop()`
/// and `update(settings:)` take effect at once, mid-round or mid-sleep.
package final class HealthChecker: @unchecked Sendable {
    private let board: DestinationHealthBoard
    private let logger: Logger
    private let onTransition: @Sendable (HealthTarget, Bool) -> Void

    /// What other threads touch: the settings, and the multi handle. The handle is created by `start()` on
    /// the caller's thread, used by the checker thread, freed by `stop()` after the join;
    /// `curl_multi_wakeup` on it is the one call libcurl allows from another thread. Set and cleared under
    /// the same lock, so a wakeup never meets a freed handle.
    private struct Shared {
        var settings: HealthCheckSettings
        var multi: UnsafeMutableRawPointer?
    }
    private let shared: Locked<Shared>
    private let stopping = Atomic<Bool>(false)
    private let thread = WorkerThread(name: "linkout-health")
    private var started = false

    /// Each target's run of results, kept by the checker thread only. The slot's identity rides along:
    /// a target dropped by a reload and named again gets a new slot, and starts a new tracker with it.
    /// The slot itself, not its ObjectIdentifier: a slot freed by one reload and one made by the next may
    /// share an address, and a new slot must not inherit an old tracker's run of failures.
    private var trackers: [HealthTarget: (slot: HealthSlot, tracker: HealthTracker)] = [:]

    /// Bytes of a GET's body read before the check stops reading; the status is known by then.
    static let bodyCap = 64 * 1024
    static let userAgent = "linkout-health/1"
    private let clock: TimeSource

    package init(
        board: DestinationHealthBoard, settings: HealthCheckSettings, logger: Logger, clock: TimeSource,
        onTransition: @escaping @Sendable (HealthTarget, Bool) -> Void
    ) {
        self.board = board
        self.clock = clock
        self.shared = Locked(Shared(settings: settings, multi: nil))
        self.logger = logger
        self.onTransition = onTransition
    }

    /// The thread holds the checker, so this runs only once it is stopped or was never started.
    deinit {
        if let multi = shared.withLock({ $0.multi }) { curl_multi_cleanup(multi) }
    }

    /// The settings the next check uses.
    package var settings: HealthCheckSettings {
        shared.withLock { $0.settings }
    }

    /// Starts the checker thread; the first round runs at once. Call once.
    package func start() {
        precondition(!started, "a HealthChecker starts once")
        // Once per process, before any thread uses libcurl (a Swift static is initialised exactly once).
        let initialised = CurlTransfer.globalInit
        if initialised != CURLE_OK {
            logger.error(
                "libcurl failed to initialise; destinations are not checked",
                metadata: [
                    "error": "\(String(cString: curl_easy_strerror(initialised)))"
                ])
        }
        let created = curl_multi_init()
        shared.withLock { $0.multi = created }
        started = true
        guard initialised == CURLE_OK, created != nil else { return }
        thread.start { [self] in run() }
    }

    /// New settings after a reload: the next check uses them, and a shorter interval cuts the current wait.
    package func update(settings: HealthCheckSettings) {
        shared.withLock {
            $0.settings = settings
            if let multi = $0.multi { curl_multi_wakeup(multi) }
        }
    }

    /// Stops the thread, abandoning checks in flight, and waits for it. Safe to call more than once.
    package func stop() {
        guard started else { return }
        if stopping.exchange(true, ordering: .acquiringAndReleasing) { return }
        shared.withLock { if let multi = $0.multi { curl_multi_wakeup(multi) } }
        thread.join()
        let freed = shared.withLock { state in
            let handle = state.multi
            state.multi = nil
            return handle
        }
        if let freed { curl_multi_cleanup(freed) }
    }

    // MARK: The thread

    private func run() {
        guard let multi = shared.withLock({ $0.multi }) else { return }
        while !isStopping {
            let roundStart = clock.monotonicNanoseconds()
            let settings = self.settings
            let targets = board.targets()
            forgetTrackers(keeping: targets)
            let results = check(targets, settings: settings, multi: multi)
            if isStopping { return }
            for (index, (target, slot)) in targets.enumerated() {
                record(results[index], target: target, slot: slot, settings: settings)
            }
            // Sleep to the next round's start, waking for stop() or new settings.
            while !isStopping {
                // At most a day between rounds, so no setting can overflow the arithmetic.
                let interval = UInt64(min(max(1, self.settings.intervalMs), 86_400_000)) * 1_000_000
                let now = clock.monotonicNanoseconds()
                let due = roundStart + interval
                if now >= due { break }
                var ignored: Int32 = 0
                curl_multi_poll(multi, nil, 0, Int32(min((due - now) / 1_000_000 + 1, 60_000)), &ignored)
            }
        }
    }

    private var isStopping: Bool { stopping.load(ordering: .acquiring) }

    private func forgetTrackers(keeping targets: [(HealthTarget, HealthSlot)]) {
        let current = Dictionary(targets.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
        trackers = trackers.filter { current[$0.key] === $0.value.slot }
    }

    /// What one check found.
    struct Outcome {
        var passed: Bool
        /// Why it failed (curl's error text, or the status); empty when it passed.
        var reason: String
        var status: Int
    }

    /// One check in flight: its transfer, and the target it checks.
    private struct Check {
        let transfer: CurlTransfer
        let index: Int
        var outcome: Outcome?
    }

    /// Checks every target at once; one outcome per target, in order. Returns early (outcomes unused) on stop.
    private func check(_ targets: [(HealthTarget, HealthSlot)], settings: HealthCheckSettings, multi: UnsafeMutableRawPointer) -> [Outcome]
    {
        var outcomes = [Outcome](repeating: Outcome(passed: false, reason: "not checked", status: 0), count: targets.count)
        var checks: [UnsafeMutableRawPointer: Check] = [:]
        // The transfers outlive their place in the multi handle: removed first, cleaned up with the Check.
        defer { for handle in checks.keys { curl_multi_remove_handle(multi, handle) } }

        for (index, (target, _)) in targets.enumerated() {
            guard let transfer = configured(target, settings: settings) else {
                outcomes[index].reason = "cannot create a curl handle"
                continue
            }
            checks[transfer.handle] = Check(transfer: transfer, index: index)
            if let problem = transfer.setupProblem {
                outcomes[index].reason = problem
                checks[transfer.handle]?.outcome = outcomes[index]
                continue
            }
            let added = curl_multi_add_handle(multi, transfer.handle)
            if added != CURLM_OK {
                outcomes[index].reason = String(cString: curl_multi_strerror(added))
                checks[transfer.handle]?.outcome = outcomes[index]
            }
        }

        var running: Int32 = 0
        repeat {
            if isStopping { return outcomes }
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard clibcurl_message_is_done(message) != 0, let handle = message.pointee.easy_handle, let check = checks[handle] else {
                    continue
                }
                checks[handle]?.outcome = outcome(
                    of: check.transfer.finish(clibcurl_message_result(message)), method: targets[check.index].0.method)
            }
            if running > 0 {
                var ignored: Int32 = 0
                // libcurl shortens the wait to its own next timeout; wakeup() cuts it for stop().
                curl_multi_poll(multi, nil, 0, 1_000, &ignored)
            }
        } while running > 0

        for check in checks.values {
            outcomes[check.index] = check.outcome ?? Outcome(passed: false, reason: "no answer from libcurl", status: 0)
        }
        return outcomes
    }

    /// A transfer for the target, its options set; nil when libcurl gives no handle.
    private func configured(_ target: HealthTarget, settings: HealthCheckSettings) -> CurlTransfer? {
        // Only http and https, here and on any redirect (none is followed, but no scheme surprises either).
        guard
            let transfer = CurlTransfer(
                url: target.url, protocols: "http,https", timeoutMs: settings.timeoutMs, caFile: settings.caFile, userAgent: Self.userAgent,
                bodyCap: Self.bodyCap, keepsBody: false)
        else { return nil }
        // libcurl 7.87+; without it a check abandoned in a DNS look-up is waited for, which is no failure.
        transfer.setIfKnown(CURLOPT_QUICK_EXIT, 1)
        transfer.set(CURLOPT_PROXY, "")
        transfer.set(CURLOPT_FRESH_CONNECT, 1)
        transfer.set(CURLOPT_FORBID_REUSE, 1)
        switch target.method {
        case .head: transfer.set(CURLOPT_NOBODY, 1)
        case .get: transfer.set(CURLOPT_HTTPGET, 1)
        }
        return transfer
    }

    private func outcome(of transferred: CurlTransfer.Outcome, method: HealthTarget.Method) -> Outcome {
        let status = transferred.status ?? 0
        if !transferred.transportError.isEmpty {
            return Outcome(passed: false, reason: transferred.transportError, status: status)
        }
        if (200...399).contains(status) {
            return Outcome(passed: true, reason: "", status: status)
        }
        // An origin check asks only whether the checkout's server answers: many answer `HEAD /` with 404
        // or 405. A 5xx is a server in trouble. An explicit health URL must answer 2xx or 3xx.
        if method == .head, (400...499).contains(status) {
            return Outcome(passed: true, reason: "", status: status)
        }
        return Outcome(passed: false, reason: "status \(status)", status: status)
    }

    // MARK: Results

    private func record(_ outcome: Outcome, target: HealthTarget, slot: HealthSlot, settings: HealthCheckSettings) {
        var entry =
            trackers[target]
            ?? (slot, HealthTracker(downAfter: settings.downAfter, upAfter: settings.upAfter))
        entry.tracker.downAfter = settings.downAfter
        entry.tracker.upAfter = settings.upAfter
        let transition = entry.tracker.record(success: outcome.passed)
        trackers[target] = entry

        // The gateway's clock: the one its requests' times come from.
        let lastUpMs = outcome.passed ? clock.nowMs() : slot.lastUpMs
        slot.update(isUp: entry.tracker.isUp, lastUpMs: lastUpMs)

        if !outcome.passed {
            logger.debug(
                "destination check failed",
                metadata: [
                    "url": "\(target.url)", "method": "\(target.method.rawValue)", "reason": "\(outcome.reason)",
                ])
        }
        switch transition {
        case .wentDown:
            logger.warning(
                "destination down",
                metadata: [
                    "url": "\(target.url)", "method": "\(target.method.rawValue)", "reason": "\(outcome.reason)",
                    "failures": "\(settings.downAfter)",
                ])
            onTransition(target, false)
        case .cameUp:
            logger.warning(
                "destination up",
                metadata: [
                    "url": "\(target.url)", "method": "\(target.method.rawValue)", "status": "\(outcome.status)",
                    "successes": "\(settings.upAfter)",
                ])
            onTransition(target, true)
        case nil:
            break
        }
    }
}
