import CLibcurl
import Foundation

/// One libcurl easy transfer, written once for every outgoing request linkout makes (Apple's reports, the
/// destinations' health checks): the handle and its error buffer, the options every such request must have
/// (verification on, no redirect followed, no signal, a timeout), the body kept up to a cap and
/// `Retry-After` read, through the one `Unmanaged` bridge to libcurl's callbacks. Performed alone
/// (`perform`), or added to a multi handle by its owner, who then asks `finish(_:)`.
final class CurlTransfer {
    let handle: UnsafeMutableRawPointer
    /// What the answer's body held, up to `bodyCap` bytes (a longer one stops the transfer).
    private(set) var body: [UInt8] = []
    /// Whether the body outgrew its cap: the transfer was cut, but its status is known.
    private(set) var capped = false
    /// The answer's `Retry-After`, when it had one.
    private(set) var retryAfter: String?
    private let bodyCap: Int
    /// Whether the body is kept, or only counted.
    private let keepsBody: Bool
    private var bodyBytes = 0
    /// CURLOPT_ERRORBUFFER: libcurl writes into it until the handle is cleaned up, so it is memory of its
    /// own (an array's storage may move), freed with the transfer.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// The first option libcurl refused, which fails the transfer before it starts.
    private var refused: CURLcode?

    /// The outcome of a transfer: the status when an answer came, else libcurl's reason.
    struct Outcome {
        var status: Int?
        var transportError: String
    }

    /// - Parameters:
    ///   - protocols: `https`, or `http,https` (also the only schemes a redirect could name).
    ///   - timeoutMs: the whole transfer's and the connection's limit.
    ///   - keepsBody: false counts the body against the cap without keeping it (a health check).
    init?(
        url: String, protocols: String, timeoutMs: Int, connectTimeoutMs: Int? = nil, caFile: String?, userAgent: String,
        bodyCap: Int, keepsBody: Bool = true
    ) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.bodyCap = bodyCap
        self.keepsBody = keepsBody
        let size = Int(clibcurl_error_size()) + 1
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
        set(CURLOPT_URL, url)
        set(CURLOPT_PROTOCOLS_STR, protocols)
        set(CURLOPT_REDIR_PROTOCOLS_STR, protocols)
        set(CURLOPT_FOLLOWLOCATION, 0)
        // Threads: no SIGALRM for DNS timeouts, which would hit any thread of the process.
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_TIMEOUT_MS, max(1, timeoutMs))
        set(CURLOPT_CONNECTTIMEOUT_MS, max(1, connectTimeoutMs ?? timeoutMs))
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile { set(CURLOPT_CAINFO, caFile) }
        set(CURLOPT_USERAGENT, userAgent)
        setPointer(CURLOPT_ERRORBUFFER, errorBuffer)
        let context = Unmanaged.passUnretained(self).toOpaque()
        note(
            clibcurl_easy_setopt_write_function(
                handle,
                { data, size, count, context in
                    guard let context else { return 0 }
                    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    let bytes = size * count
                    transfer.bodyBytes += bytes
                    // Returning less than given stops the transfer (CURLE_WRITE_ERROR); the status is known.
                    guard transfer.bodyBytes <= transfer.bodyCap else {
                        transfer.capped = true
                        return 0
                    }
                    if transfer.keepsBody, let data {
                        data.withMemoryRebound(to: UInt8.self, capacity: bytes) {
                            transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: bytes))
                        }
                    }
                    return bytes
                }))
        setPointer(CURLOPT_WRITEDATA, context)
        note(
            clibcurl_easy_setopt_header_function(
                handle,
                { data, size, count, context in
                    guard let data, let context else { return 0 }
                    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    let bytes = size * count
                    let line = data.withMemoryRebound(to: UInt8.self, capacity: bytes) {
                        String(decoding: UnsafeBufferPointer(start: $0, count: bytes), as: UTF8.self)
                    }
                    if line.lowercased().hasPrefix("retry-after:") {
                        transfer.retryAfter = line.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespacesAndNewlines)
                    }
                    return bytes
                }))
        setPointer(CURLOPT_HEADERDATA, context)
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) { note(clibcurl_easy_setopt_long(handle, option, value)) }
    func set(_ option: CURLoption, _ value: String) { note(clibcurl_easy_setopt_string(handle, option, value)) }
    private func setPointer(_ option: CURLoption, _ value: UnsafeMutableRawPointer?) {
        note(clibcurl_easy_setopt_pointer(handle, option, value))
    }

    /// Makes the transfer use a share handle's data (TLS sessions, DNS) with the others that use it.
    func share(_ share: UnsafeMutableRawPointer) { setPointer(CURLOPT_SHARE, share) }

    /// Sets an option that older libcurls lack, whose absence is no reason to fail the transfer.
    func setIfKnown(_ option: CURLoption, _ value: Int) { _ = clibcurl_easy_setopt_long(handle, option, value) }

    private func note(_ code: CURLcode) {
        if code != CURLE_OK, refused == nil { refused = code }
    }

    /// The request's headers (libcurl keeps the list until the handle is cleaned up).
    func setHeaders(_ headers: [String]) {
        for header in headers { headerList = curl_slist_append(headerList, header) }
        setPointer(CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList))
    }

    /// The method, and the body libcurl copies (it need not outlive the call's Swift string).
    func setRequest(method: String, body: String?) {
        set(CURLOPT_CUSTOMREQUEST, method)
        if let body {
            set(CURLOPT_POSTFIELDSIZE, body.utf8.count)
            set(CURLOPT_COPYPOSTFIELDS, body)
        } else {
            set(CURLOPT_HTTPGET, 1)
        }
    }

    /// Why the transfer cannot start: an option libcurl refused (an unsupported scheme, say); nil when it can.
    var setupProblem: String? { refused.map { String(cString: curl_easy_strerror($0)) } }

    /// Runs the transfer to its end on this thread.
    func perform() -> Outcome {
        if let setupProblem { return Outcome(status: nil, transportError: setupProblem) }
        return finish(curl_easy_perform(handle))
    }

    /// The outcome of a transfer that ended with `result` (from `perform`, or a multi handle's message). A
    /// body cut at its cap still has its status.
    func finish(_ result: CURLcode) -> Outcome {
        var status = 0
        clibcurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        guard result == CURLE_OK || (result == CURLE_WRITE_ERROR && capped), status > 0 else {
            // The error buffer says more than the code's text ("SSL certificate problem: ..."), when set.
            let detail = String(cString: errorBuffer)
            return Outcome(
                status: status > 0 ? status : nil, transportError: detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail)
        }
        return Outcome(status: status, transportError: "")
    }

    /// Once per process, before any thread uses libcurl (a Swift static is initialised exactly once).
    static let globalInit: CURLcode = clibcurl_global_init_default()
}
