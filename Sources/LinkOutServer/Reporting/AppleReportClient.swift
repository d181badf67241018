import CLibcurl
import Foundation
import LinkOutCore
import LinkOutStore

/// Sends reports to Apple's External Purchase Server API, and reads the App Store Server API's notification
/// history, over libcurl (already linked for health checks; certificates and host verified, https only, no
/// redirects followed, a timeout on every request). Blocking: used only on the reporter's threads or by a
/// command.
final class AppleReportClient {
    /// Apple's answer, or what kept it from coming.
    struct Answer {
        /// nil when no HTTP answer came.
        var status: Int?
        var body: String
        var retryAfter: String?
        /// libcurl's reason when no answer came.
        var transportError: String
    }

    private let settings: ReportingSettings
    private let signer: AppStoreJWT
    private static let bodyCap = 1_048_576

    init(settings: ReportingSettings) throws {
        self.settings = settings
        signer = try AppStoreJWT(privateKeyPEM: settings.privateKeyPEM, keyId: settings.keyId, issuerId: settings.issuerId)
        _ = CurlTransfer.globalInit
    }

    /// `PUT /externalPurchase/v1/reports` with the report's body.
    func send(_ report: OutboxReport, now: Int64) -> Answer {
        request(
            method: "PUT", url: settings.baseURL(for: report.environment) + "/externalPurchase/v1/reports",
            bundleId: report.bundleId, body: report.body, now: now)
    }

    /// `GET /externalPurchase/v1/reports/{requestIdentifier}`: after a duplicate answer, whether Apple holds it.
    func fetch(_ report: OutboxReport, now: Int64) -> Answer {
        request(
            method: "GET", url: settings.baseURL(for: report.environment) + "/externalPurchase/v1/reports/" + report.requestIdentifier,
            bundleId: report.bundleId, body: nil, now: now)
    }

    /// `POST /inApps/v1/notifications/history` (the App Store Server API, on the same hosts and with the same
    /// key): one page of the app's `EXTERNAL_PURCHASE_TOKEN` notifications in `span`.
    func notificationHistory(
        bundleId: String, environment: TokenEnvironment, span: Range<Int64>, paginationToken: String?, now: Int64
    ) -> Answer {
        let query = paginationToken.map { "?paginationToken=" + ($0.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? $0) } ?? ""
        return request(
            method: "POST", url: settings.baseURL(for: environment) + NotificationHistory.path + query, bundleId: bundleId,
            body: NotificationHistory.requestBody(span), now: now)
    }

    /// RFC 3986's unreserved characters: everything else in a query value is percent-encoded.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private func request(method: String, url: String, bundleId: String, body: String?, now: Int64) -> Answer {
        guard let transfer = CurlTransfer(
            url: url, protocols: "https", timeoutMs: settings.timeoutSeconds * 1000, connectTimeoutMs: min(settings.timeoutSeconds, 10) * 1000,
            caFile: settings.caFile, userAgent: "linkout/\(linkoutVersion)", bodyCap: Self.bodyCap)
        else {
            return Answer(status: nil, body: "", retryAfter: nil, transportError: "curl_easy_init failed")
        }
        // The JWT is made per request (its life is 5 minutes) and never logged.
        transfer.setHeaders(["Authorization: Bearer \(signer.token(bundleId: bundleId, now: now / 1000))", "Accept: application/json"]
            + (body == nil ? [] : ["Content-Type: application/json"]))
        transfer.setRequest(method: method, body: body)
        let outcome = transfer.perform()
        let text = String(decoding: transfer.body, as: UTF8.self)
        // An answer cut off by a failure after its status line is no answer: the report is sent again.
        guard outcome.transportError.isEmpty, let status = outcome.status else {
            return Answer(status: nil, body: text, retryAfter: nil, transportError: outcome.transportError)
        }
        return Answer(status: status, body: text, retryAfter: transfer.retryAfter, transportError: "")
    }
}
