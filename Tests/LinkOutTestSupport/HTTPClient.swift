import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A response as read off the socket.
package struct HTTPResponse {
    package var status: Int
    /// Header names lowercased; repeated headers joined with ", ".
    package var headers: [String: String]
    package var body: [UInt8]
    package var bodyText: String { String(decoding: body, as: UTF8.self) }

    package subscript(header name: String) -> String? { headers[name.lowercased()] }
}

package enum HTTPClientError: Error, CustomStringConvertible {
    case connect(Int32)
    case closed(received: Int)
    case malformed(String)

    package var description: String {
        switch self {
        case .connect(let code): "connect failed: errno \(code)"
        case .closed(let received): "connection closed after \(received) bytes"
        case .malformed(let text): "malformed response: \(text)"
        }
    }
}

/// A deliberately small HTTP/1.1 client over a raw socket, so tests control every byte sent (methods,
/// malformed targets, oversize headers) and see every byte answered, with no redirect-following or caching
/// in between.
package final class HTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []

    package init(port: Int, timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // Not closed here: every stored property is set, so a throw still runs `deinit`, which closes it.
        // Closing here as well closed the same number twice, and the second close could take an fd another
        // thread had just been given (a `Process` pipe, whose read then trapped in Foundation with EBADF).
        guard result == 0 else { throw HTTPClientError.connect(errno) }
    }

    deinit { close(fd) }

    package func sendRaw(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw HTTPClientError.closed(received: 0) }
            sent += count
        }
    }

    package func sendRaw(_ text: String) throws { try sendRaw(Array(text.utf8)) }

    /// Sends a request with the usual headers and reads its response.
    package func request(_ method: String = "GET", _ target: String, headers: [String] = []) throws -> HTTPResponse {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for header in headers { text += header + "\r\n" }
        text += "\r\n"
        try sendRaw(text)
        return try readResponse(head: method == "HEAD")
    }

    /// Reads one response. `head`: the response to a HEAD has no body whatever its Content-Length says.
    package func readResponse(head: Bool = false) throws -> HTTPResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            if let found = find(separator) {
                headerEnd = found
                break
            }
            try fill()
        }
        let headText = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd! + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw HTTPClientError.malformed(headText) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        var body: [UInt8] = []
        if !head, let length = headers["content-length"].flatMap({ Int($0) }) {
            while buffer.count < length { try fill() }
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        }
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// True when the server has already closed the connection; does not wait for data.
    package func isClosedByPeerWithoutWaiting() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// True once the server has closed the connection (reads return 0).
    package func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw HTTPClientError.closed(received: buffer.count) }
        buffer.append(contentsOf: chunk[..<count])
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for start in 0...(buffer.count - pattern.count) where buffer[start..<start + pattern.count].elementsEqual(pattern) {
            return start
        }
        return nil
    }
}

/// One request on a new connection.
package func fetch(port: Int, _ method: String = "GET", _ target: String, headers: [String] = []) throws -> HTTPResponse {
    try HTTPConnection(port: port).request(method, target, headers: headers)
}
