/// An access record as one JSON line, written byte by byte into the batch's buffer: the same fields, in
/// the same order, as the operator log's JSON lines (`time`, `level`, `label`, `message`, then the fields
/// by name), without building a metadata dictionary, sorting keys or concatenating strings per request,
/// which cost the access log more than the rest of the request path once did.
public enum AccessLogLine {
    /// - Parameters:
    ///   - time: the `time` field's ISO 8601 text (when the batch is written), formatted once per batch.
    ///   - client: the client's address as the log keeps it (already truncated by `ClientAddressPolicy`).
    public static func append(_ record: AccessRecord, time: String, client: String, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"time":""#.utf8)
        output.append(contentsOf: time.utf8)
        output.append(contentsOf: #"","level":"info","label":"linkout.access","message":"request","client":"#.utf8)
        quote(client, into: &output)
        if let destination = record.destination {
            output.append(contentsOf: #","destination":"#.utf8)
            quote(destination, into: &output)
        }
        output.append(contentsOf: #","durationUs":"#.utf8)
        decimal(record.durationMicroseconds, into: &output)
        if let id = record.externalPurchaseId {
            output.append(contentsOf: #","externalPurchaseId":"#.utf8)
            quote(id, into: &output)
        }
        if let kind = record.kind {
            output.append(contentsOf: #","kind":"#.utf8)
            quote(kind, into: &output)
        }
        output.append(contentsOf: #","method":"#.utf8)
        quote(record.method, into: &output)
        if let reason = record.reason {
            output.append(contentsOf: #","reason":"#.utf8)
            quote(reason, into: &output)
        }
        output.append(contentsOf: #","route":"#.utf8)
        quote(record.route, into: &output)
        output.append(contentsOf: #","status":"#.utf8)
        decimal(Int64(record.status), into: &output)
        output.append(contentsOf: #","ts":"#.utf8)
        decimal(record.time, into: &output)
        output.append(contentsOf: "}\n".utf8)
    }

    private static func quote(_ text: String, into output: inout [UInt8]) { JSONText.appendQuoted(text, to: &output) }
    private static func decimal(_ value: Int64, into output: inout [UInt8]) { JSONText.appendDecimal(value, to: &output) }
}
