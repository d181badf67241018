/// What an accepted line does to the store.
public enum LineItemDisposition: Sendable, Equatable {
    /// No line of the app has its id yet: store it and report it.
    case new
    /// Identical to the stored line with its id (a resend): store nothing, report nothing new.
    case unchanged
    /// Same id and token as a stored line, different content: it replaces that line and is reported.
    case restatement
}
