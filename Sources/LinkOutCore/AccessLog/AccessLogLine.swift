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
        string(#","destination":"#, record.destination, into: &output)
        output.append(contentsOf: #","durationUs":"#.utf8)
        decimal(record.durationMicroseconds, into: &output)
        string(#","externalPurchaseId":"#, record.externalPurchaseId, into: &output)
        string(#","kind":"#, record.kind, into: &output)
        output.append(contentsOf: #","method":"#.utf8)
        quote(record.method, into: &output)
        string(#","reason":"#, record.reason, into: &output)
        output.append(contentsOf: #","route":"#.utf8)
        quote(record.route, into: &output)
        output.append(contentsOf: #","status":"#.utf8)
        decimal(Int64(record.status), into: &output)
        output.append(contentsOf: #","ts":"#.utf8)
        decimal(record.time, into: &output)
        output.append(contentsOf: "}\n".utf8)
    }

    /// An optional field: its `,"name":` and quoted value, or nothing when there is no value.
    private static func string(_ key: StaticString, _ value: String?, into output: inout [UInt8]) {
        guard let value else { return }
        output.append(contentsOf: UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        quote(value, into: &output)
    }

    private static func quote(_ text: String, into output: inout [UInt8]) { JSONText.appendQuoted(text, to: &output) }
    private static func decimal(_ value: Int64, into output: inout [UInt8]) { JSONText.appendDecimal(value, to: &output) }
}
