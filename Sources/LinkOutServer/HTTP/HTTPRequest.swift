import LinkOutCore

/// Where a request came from, as text worked out only when asked: the connection (from its socket's
/// address), or in a test a fixed address.
protocol PeerAddress: AnyObject {
    var peer: String { get }
}

/// A request as the connection layer hands it to a responder: its head's parts as offsets into the
/// connection's input, read in place. Valid only during the call it is passed to. Built from bytes and a
/// peer, so a responder can be asked without a socket.
struct HTTPRequest {
    /// The head and its body, as received.
    let bytes: UnsafeRawBufferPointer
    let head: RequestHead
    /// Where the peer's address comes from, worked out only if asked. `unowned(unsafe)`: no retain and
    /// release per request; the connection (or a test's peer) outlives the call the request is passed to.
    private unowned(unsafe) let peerAddress: any PeerAddress

    init(bytes: UnsafeRawBufferPointer, head: RequestHead, peer: any PeerAddress) {
        self.bytes = bytes
        self.head = head
        self.peerAddress = peer
    }

    /// The peer's address text.
    var peer: String { peerAddress.peer }

    var method: HTTPMethod { head.method }

    /// The request target as sent (`/nl?externalPurchaseToken=…`).
    var target: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[head.target]) }

    /// The target's path, before any `?`.
    var path: UnsafeRawBufferPointer {
        let target = self.target
        return UnsafeRawBufferPointer(rebasing: target.prefix { $0 != UInt8(ascii: "?") })
    }

    var pathText: String { String(decoding: path, as: UTF8.self) }
    var targetText: String { String(decoding: target, as: UTF8.self) }

    var body: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[head.headLength..<(head.headLength + head.contentLength)])
    }

    /// A field's value as text (the parser has checked its bytes).
    func text(_ range: Range<Int>?) -> String? {
        range.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
    }
}
