import LinkOutCore
import Logging

/// The operator log's text format, swift-log's `StreamLogHandler`, with each record kept to one physical
/// line: the message and every metadata value pass through `LogLineText.oneLine` first, so a libpq error
/// of three lines (`…failed: Connection refused\n\tIs the server running…`) stays one record for `grep`,
/// journald and line-based alerting. The JSON lines handler needs none of this: JSON escapes them itself.
///
/// The handler's own metadata (`logger[metadataKey:]`) is kept here, not in the inner handler, so that it
/// is escaped with the record's.
package struct OneLineLogHandler: LogHandler {
    private var inner: StreamLogHandler
    package var metadata: Logger.Metadata

    /// - Parameter inner: writes the escaped record (`StreamLogHandler(label:stream:)` in tests).
    package init(wrapping inner: StreamLogHandler) {
        self.inner = inner
        metadata = inner.metadata
        self.inner.metadata = [:]
    }

    package var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var event = event
        var merged = metadata
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        // An error passed as `error:` becomes the same two fields StreamLogHandler adds, here, so that its
        // text (often several lines) is escaped too.
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
            event.error = nil
        }
        event.metadata = merged.isEmpty ? nil : merged.mapValues(Self.oneLine)
        event.message = "\(LogLineText.oneLine(event.message.description))"
        inner.log(event: event)
    }

    private static func oneLine(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(LogLineText.oneLine(text))
        case .stringConvertible(let convertible): .string(LogLineText.oneLine(convertible.description))
        case .array(let values): .array(values.map(oneLine))
        case .dictionary(let dictionary): .dictionary(dictionary.mapValues(oneLine))
        }
    }
}

extension OneLineLogHandler {
    /// The text log on standard error, as `serve` and the reporting commands write it.
    package static func standardError(label: String) -> OneLineLogHandler {
        OneLineLogHandler(wrapping: StreamLogHandler.standardError(label: label))
    }
}
