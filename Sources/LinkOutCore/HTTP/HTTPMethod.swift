/// The request methods linkout knows (RFC 9110 §9 and PATCH, RFC 5789). Methods are case-sensitive
/// tokens, so `get` is not one of them: `RequestHeadParser` refuses any other token as `unknownMethod`
/// (501), before the route decides which of these it serves.
public enum HTTPMethod: UInt8, Sendable, CaseIterable {
    case get, head, post, put, delete, options, trace, connect, patch

    /// The method as it is written on the request line.
    public var name: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .post: "POST"
        case .put: "PUT"
        case .delete: "DELETE"
        case .options: "OPTIONS"
        case .trace: "TRACE"
        case .connect: "CONNECT"
        case .patch: "PATCH"
        }
    }
}
