import CLibcurl
import Foundation
import LinkOutCore
import LinkOutStore

/// Sends reports to Apple's External Purchase Server API, and reads the App Store Server API's notification
/// history, over libcurl (already linked for health checks; certificates and host verified, https only, no
/// redirects followed, a timeout on every request).
///
/// Every request goes through one libcurl multi handle kept for the client's life, so its connections stay
/// open and are reused across requests and rounds (HTTP/2 multiplexed where Apple's host offers it, else
/// one kept-alive HTTP/1.1 connection per request in flight), and TLS sessions are resumed. Several
/// reports may be in flight (`startSend`, then `answers`); `fetch` and `notificationHistory` wait for
/// their own answer, keeping what others brought meanwhile for `answers`. The JWT of each app is signed once
/// and reused for half its life (`AppStoreJWTCache`), renewed at once after a 401. Blocking, and used by one
/// thread only: the reporter's, or a command's.
final class AppleReportClient {
    /// Apple's answer, or what kept it from coming.
    struct Answer {
        /// nil when no HTTP answer came.
        var status: Int?
        var body: String
        var retryAfter: String?
        /// libcurl's reason when no answer came.
        var transportError: String
        /// From the request's start to its end.
        var latencyMs: Int64 = 0
    }

    /// A request in flight, named by the number `start` gave it.
    typealias Ticket = Int

    private let settings: ReportingSettings
    private var jwts: AppStoreJWTCache
    private static let bodyCap = 1_048_576
    private let multi: UnsafeMutableRawPointer?
    /// TLS sessions and DNS answers shared by every transfer (libcurl before 8.12 keeps sessions per easy
    /// handle): a new connection to a host resumes the session of an earlier one. One thread only, so no locks.
    private let share: UnsafeMutableRawPointer?

    private struct InFlight {
        let ticket: Ticket
        let transfer: CurlTransfer
        let bundleId: String
        let startedAt: UInt64
    }
    private var inFlight: [UnsafeMutableRawPointer: InFlight] = [:]
    /// Answers that came while a blocking request waited for its own.
    private var arrived: [(Ticket, Answer)] = []
    private var nextTicket: Ticket = 0

    /// - Parameter maxConnections: the connections kept open at most (the reporter's ceiling of requests in flight).
    init(settings: ReportingSettings, maxConnections: Int? = nil) throws {
        self.settings = settings
        jwts = AppStoreJWTCache(
            signer: try AppStoreJWT(privateKeyPEM: settings.privateKeyPEM, keyId: settings.keyId, issuerId: settings.issuerId))
        _ = CurlTransfer.globalInit
        multi = curl_multi_init()
        share = curl_share_init()
        if let share {
            _ = clibcurl_share_data(share, CURL_LOCK_DATA_SSL_SESSION)
            _ = clibcurl_share_data(share, CURL_LOCK_DATA_DNS)
        }
        if let multi {
            let connections = max(1, maxConnections ?? settings.maxConcurrentRequests)
            _ = clibcurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
            _ = clibcurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connections)
            _ = clibcurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connections)
        }
    }

    deinit {
        abandonAll()
        if let multi { curl_multi_cleanup(multi) }
        // Last: no transfer uses it any more (abandonAll freed those in flight).
        if let share { curl_share_cleanup(share) }
    }

    /// Starts `PUT /externalPurchase/v1/reports`; its answer comes from `answers`.
    func startSend(_ report: OutboxReport, now: Int64) -> Ticket {
        start(
            method: "PUT", url: settings.baseURL(for: report.environment) + "/externalPurchase/v1/reports",
            bundleId: report.bundleId, body: report.body, now: now)
    }

    /// `GET /externalPurchase/v1/reports/{requestIdentifier}`: after a duplicate answer, whether Apple holds it.
    func fetch(_ report: OutboxReport, now: Int64) -> Answer {
        wait(
            for: start(
                method: "GET", url: settings.baseURL(for: report.environment) + "/externalPurchase/v1/reports/" + report.requestIdentifier,
                bundleId: report.bundleId, body: nil, now: now))
    }

    /// `POST /inApps/v1/notifications/history` (the App Store Server API, on the same hosts and with the same
    /// key): one page of the app's `EXTERNAL_PURCHASE_TOKEN` notifications in `span`.
    func notificationHistory(
        bundleId: String, environment: TokenEnvironment, span: Range<Int64>, paginationToken: String?, now: Int64
    ) -> Answer {
        let query =
            paginationToken.map { "?paginationToken=" + ($0.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? $0) } ?? ""
        return wait(
            for: start(
                method: "POST", url: settings.baseURL(for: environment) + NotificationHistory.path + query, bundleId: bundleId,
                body: NotificationHistory.requestBody(span), now: now))
    }

    /// RFC 3986's unreserved characters: everything else in a query value is percent-encoded.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private func start(method: String, url: String, bundleId: String, body: String?, now: Int64) -> Ticket {
        let ticket = nextTicket
        nextTicket += 1
        func failed(_ why: String) -> Ticket {
            arrived.append((ticket, Answer(status: nil, body: "", retryAfter: nil, transportError: why)))
            return ticket
        }
        guard let multi,
            let transfer = CurlTransfer(
                url: url, protocols: "https", timeoutMs: settings.timeoutSeconds * 1000,
                connectTimeoutMs: min(settings.timeoutSeconds, 10) * 1000,
                caFile: settings.caFile, userAgent: "linkout/\(linkoutVersion)", bodyCap: Self.bodyCap)
        else { return failed("curl_easy_init failed") }
        // HTTP/2 where the host offers it (ALPN), and then one connection for every request in flight.
        transfer.setIfKnown(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        transfer.setIfKnown(CURLOPT_PIPEWAIT, 1)
        transfer.setIfKnown(CURLOPT_TCP_KEEPALIVE, 1)
        if let share { transfer.share(share) }
        // The app's JWT, signed once for minutes (never logged).
        transfer.setHeaders(
            ["Authorization: Bearer \(jwts.token(bundleId: bundleId, now: now / 1000))", "Accept: application/json"]
                + (body == nil ? [] : ["Content-Type: application/json"]))
        transfer.setRequest(method: method, body: body)
        if let problem = transfer.setupProblem { return failed(problem) }
        let added = curl_multi_add_handle(multi, transfer.handle)
        guard added == CURLM_OK else { return failed(String(cString: curl_multi_strerror(added))) }
        inFlight[transfer.handle] = InFlight(
            ticket: ticket, transfer: transfer, bundleId: bundleId, startedAt: DispatchTime.now().uptimeNanoseconds)
        return ticket
    }

    /// The answers that came, waiting up to `timeoutMs` for at least one while any request is in flight.
    func answers(timeoutMs: Int = 1_000) -> [(Ticket, Answer)] {
        if arrived.isEmpty, !inFlight.isEmpty { pump(timeoutMs: timeoutMs) }
        defer { arrived = [] }
        return arrived
    }

    /// Runs the transfers until `ticket`'s answer comes; others' answers are kept for `answers`.
    private func wait(for ticket: Ticket) -> Answer {
        while true {
            if let index = arrived.firstIndex(where: { $0.0 == ticket }) { return arrived.remove(at: index).1 }
            guard inFlight.values.contains(where: { $0.ticket == ticket }) else {
                return Answer(status: nil, body: "", retryAfter: nil, transportError: "no answer from libcurl")
            }
            pump(timeoutMs: 1_000)
        }
    }

    /// One turn of the multi handle: progress every transfer, collect those that ended, and wait (up to
    /// `timeoutMs`, shortened by libcurl to its own next timeout) if none did.
    private func pump(timeoutMs: Int) {
        guard let multi else { return }
        var running: Int32 = 0
        for pass in 0..<2 {
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            var ended = false
            while let message = curl_multi_info_read(multi, &queued) {
                guard clibcurl_message_is_done(message) != 0, let handle = message.pointee.easy_handle,
                    let request = inFlight.removeValue(forKey: handle)
                else { continue }
                curl_multi_remove_handle(multi, handle)
                arrived.append((request.ticket, answer(of: request, result: clibcurl_message_result(message))))
                ended = true
            }
            if ended || running == 0 || pass == 1 { return }
            var ignored: Int32 = 0
            curl_multi_poll(multi, nil, 0, Int32(timeoutMs), &ignored)
        }
    }

    private func answer(of request: InFlight, result: CURLcode) -> Answer {
        let transfer = request.transfer
        let outcome = transfer.finish(result)
        let latency = Int64((DispatchTime.now().uptimeNanoseconds - request.startedAt) / 1_000_000)
        let text = String(decoding: transfer.body, as: UTF8.self)
        // An answer cut off by a failure after its status line is no answer: the report is sent again.
        guard outcome.transportError.isEmpty, let status = outcome.status else {
            return Answer(status: nil, body: text, retryAfter: nil, transportError: outcome.transportError, latencyMs: latency)
        }
        // Apple refused the token: the next request of the app signs a new one.
        if status == 401 { jwts.forget(bundleId: request.bundleId) }
        return Answer(status: status, body: text, retryAfter: transfer.retryAfter, transportError: "", latencyMs: latency)
    }

    /// Drops every request in flight unanswered (the reporter stops, or the store failed): their reports
    /// stay leased and are sent again with the same requestIdentifier.
    func abandonAll() {
        if let multi { for handle in inFlight.keys { curl_multi_remove_handle(multi, handle) } }
        inFlight = [:]
        arrived = []
    }
}
