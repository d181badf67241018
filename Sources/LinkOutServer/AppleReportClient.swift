import CLibcurl
import Foundation
import LinkOutCore
import LinkOutStore

/// Sends reports to Apple's External Purchase Server API over libcurl (already linked for health checks;
/// certificates and host verified, https only, no redirects followed, a timeout on every request).
/// Blocking: used only on the reporter's thread or by a command.
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
        _ = Self.globalInit
    }

    private static let globalInit: CURLcode = clibcurl_global_init_default()

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

    /// What one transfer collects; passed through libcurl's callbacks.
    private final class Transfer {
        var body: [UInt8] = []
        var retryAfter: String?
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(clibcurl_error_size()) + 1)

        init() { errorBuffer.initialize(to: 0) }
        deinit { errorBuffer.deallocate() }
    }

    private func request(method: String, url: String, bundleId: String, body: String?, now: Int64) -> Answer {
        guard let handle = curl_easy_init() else {
            return Answer(status: nil, body: "", retryAfter: nil, transportError: "curl_easy_init failed")
        }
        defer { curl_easy_cleanup(handle) }
        let transfer = Transfer()
        var headers: UnsafeMutablePointer<curl_slist>?
        // The JWT is made per request (its life is 5 minutes) and never logged.
        for header in ["Authorization: Bearer \(signer.token(bundleId: bundleId, now: now / 1000))", "Accept: application/json"]
            + (body == nil ? [] : ["Content-Type: application/json"]) {
            headers = curl_slist_append(headers, header)
        }
        defer { curl_slist_free_all(headers) }

        var results: [CURLcode] = []
        func set(_ option: CURLoption, _ value: Int) { results.append(clibcurl_easy_setopt_long(handle, option, value)) }
        func set(_ option: CURLoption, _ value: String) { results.append(clibcurl_easy_setopt_string(handle, option, value)) }
        set(CURLOPT_URL, url)
        set(CURLOPT_PROTOCOLS_STR, "https")
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_TIMEOUT, settings.timeoutSeconds)
        set(CURLOPT_CONNECTTIMEOUT, min(settings.timeoutSeconds, 10))
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = settings.caFile { set(CURLOPT_CAINFO, caFile) }
        set(CURLOPT_USERAGENT, "linkout/\(linkoutVersion)")
        set(CURLOPT_CUSTOMREQUEST, method)
        // libcurl copies the body (COPYPOSTFIELDS), so it need not outlive this call's Swift string.
        if let body {
            set(CURLOPT_POSTFIELDSIZE, body.utf8.count)
            set(CURLOPT_COPYPOSTFIELDS, body)
        } else {
            set(CURLOPT_HTTPGET, 1)
        }
        results.append(clibcurl_easy_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)))
        results.append(clibcurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer))
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        results.append(clibcurl_easy_setopt_write_function(handle, { data, size, count, context in
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
            let bytes = size * count
            guard transfer.body.count + bytes <= AppleReportClient.bodyCap else { return 0 }
            data.withMemoryRebound(to: UInt8.self, capacity: bytes) { transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: bytes)) }
            return bytes
        }))
        results.append(clibcurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
        results.append(clibcurl_easy_setopt_header_function(handle, { data, size, count, context in
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
            let bytes = size * count
            let line = data.withMemoryRebound(to: UInt8.self, capacity: bytes) { String(decoding: UnsafeBufferPointer(start: $0, count: bytes), as: UTF8.self) }
            if line.lowercased().hasPrefix("retry-after:") {
                transfer.retryAfter = line.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            return bytes
        }))
        results.append(clibcurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
        if let failed = results.first(where: { $0 != CURLE_OK }) {
            return Answer(status: nil, body: "", retryAfter: nil, transportError: String(cString: curl_easy_strerror(failed)))
        }

        let result = curl_easy_perform(handle)
        var status = 0
        clibcurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        let text = String(decoding: transfer.body, as: UTF8.self)
        guard result == CURLE_OK, status > 0 else {
            let detail = String(cString: transfer.errorBuffer)
            return Answer(
                status: nil, body: text, retryAfter: nil,
                transportError: detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail)
        }
        return Answer(status: status, body: text, retryAfter: transfer.retryAfter, transportError: "")
    }
}
