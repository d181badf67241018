import CLibevent
import Glibc
import LinkOutCore

/// The one place that builds, rebinds and reads `sockaddr` values: every conversion between Swift and C
/// socket addresses happens here, and the pointers never leave the closures that lend them.
enum SocketAddress {
    /// A numeric IPv4 or IPv6 address and port (`localhost` as 127.0.0.1). `evutil_parse_sockaddr_port`
    /// refuses port 0, which tests and scripts need to let the kernel pick a free port.
    static func make(_ listen: ListenAddress) -> (sockaddr_storage, Int32)? {
        var storage = sockaddr_storage()
        let port = UInt16(listen.port).bigEndian
        let host = listen.host == "localhost" ? "127.0.0.1" : listen.host
        var ipv4 = sockaddr_in()
        if inet_pton(AF_INET, host, &ipv4.sin_addr) == 1 {
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = port
            // Copy inside both closures: a pointer must not outlive the closure that lent it (the optimiser
            // reuses that memory, which once turned the address family into garbage in release builds).
            withUnsafeBytes(of: ipv4) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            return (storage, Int32(MemoryLayout<sockaddr_in>.size))
        }
        var ipv6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &ipv6.sin6_addr) == 1 {
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = port
            withUnsafeBytes(of: ipv6) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            return (storage, Int32(MemoryLayout<sockaddr_in6>.size))
        }
        return nil
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    static func withSockAddr<Result>(_ storage: sockaddr_storage, _ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
    }

    /// Copies what accept() handed over.
    static func copy(_ address: UnsafePointer<sockaddr>?, length: Int32) -> sockaddr_storage {
        var storage = sockaddr_storage()
        guard let address, length > 0 else { return storage }
        let count = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: count)) }
        return storage
    }

    /// The port a socket is bound to: the real one when port 0 was asked for.
    static func localPort(of socket: Int32) -> Int {
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &bound) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socket, $0, &length) }
        }
        return port(of: bound)
    }

    static func port(of storage: sockaddr_storage) -> Int {
        withUnsafeBytes(of: storage) { raw in
            if storage.ss_family == sa_family_t(AF_INET6) {
                return Int(
                    UInt16(
                        bigEndian: raw.loadUnaligned(fromByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!, as: UInt16.self)))
            }
            return Int(
                UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self)))
        }
    }

    /// The address as text ("203.0.113.9", "::1"), as the access log, the rate limit and GeoIP read it.
    static func text(_ storage: sockaddr_storage) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var copy = storage
        let written: UnsafePointer<CChar>? = withUnsafeMutableBytes(of: &copy) { raw in
            if storage.ss_family == sa_family_t(AF_INET6) {
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
                return inet_ntop(AF_INET6, raw.baseAddress! + offset, &buffer, socklen_t(buffer.count))
            }
            if storage.ss_family == sa_family_t(AF_INET) {
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
                return inet_ntop(AF_INET, raw.baseAddress! + offset, &buffer, socklen_t(buffer.count))
            }
            return nil
        }
        guard written != nil else { return "-" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
