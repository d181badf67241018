import CLibmaxminddb

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A MaxMind DB (GeoLite2-Country / GeoIP2-Country / City, or any DB with country.iso_code), opened once
/// with MMDB_MODE_MMAP and read from any thread (libmaxminddb lookups are thread-safe on a shared MMDB_s).
///
/// The one write libmaxminddb makes after opening (it caches where the IPv4 subtree of an IPv6 database
/// starts, on the first IPv4 lookup) is done here in `init`, before the database can be shared, so
/// concurrent lookups only read.
package final class GeoIPDatabase: @unchecked Sendable {
    /// Why a database could not be opened: the path and libmaxminddb's reason.
    package struct OpenError: Error, CustomStringConvertible {
        package let path: String
        /// `MMDB_strerror`'s text, with the system's reason for an I/O error.
        package let reason: String
        package var description: String { "cannot open MaxMind database \(path): \(reason)" }
    }

    private let mmdb: UnsafeMutablePointer<MMDB_s>

    package init(path: String) throws {
        let mmdb = UnsafeMutablePointer<MMDB_s>.allocate(capacity: 1)
        mmdb.initialize(to: MMDB_s())
        errno = 0
        let status = MMDB_open(path, UInt32(MMDB_MODE_MMAP), mmdb)
        guard status == MMDB_SUCCESS else {
            let systemError = errno
            var reason = String(cString: MMDB_strerror(status))
            if status == MMDB_FILE_OPEN_ERROR || status == MMDB_IO_ERROR, systemError != 0 {
                reason += " (\(String(cString: strerror(systemError))))"
            }
            mmdb.deinitialize(count: 1)
            mmdb.deallocate()
            throw OpenError(path: path, reason: reason)
        }
        self.mmdb = mmdb
        // Warm libmaxminddb's lazily computed IPv4 start node now, while no other thread can see this.
        var any = in_addr(s_addr: 0)
        _ = lookUp(ipv4: &any)
    }

    deinit {
        MMDB_close(mmdb)
        mmdb.deinitialize(count: 1)
        mmdb.deallocate()
    }

    /// Lowercase ISO 3166-1 alpha-2 of the address's country (country.iso_code, falling back to
    /// registered_country.iso_code), nil when unknown/not found/not two ASCII letters. `address` is numeric
    /// IPv4 or IPv6 text as the connection layer gives a peer ("203.0.113.9", "::1"); an IPv4-mapped IPv6 address
    /// ("::ffff:203.0.113.9", what a dual-stack listener reports) is looked up as its IPv4 address.
    ///
    /// Runs per request on the event loop: the text is parsed with inet_pton into stack storage and looked
    /// up with MMDB_lookup_sockaddr (MMDB_lookup_string would call getaddrinfo), and the result is a small
    /// (inline, unallocated) String.
    package func country(forAddress address: String) -> String? {
        // A native String hands out its own NUL-terminated bytes (a small one is copied to the stack).
        address.withCString { text -> String? in
            // A NUL inside the text would end it early: "203.0.113.9\0x" is not an address.
            guard strlen(text) == address.utf8.count else { return nil }
            var ipv4 = in_addr()
            if inet_pton(AF_INET, text, &ipv4) == 1 {
                return lookUp(ipv4: &ipv4)
            }
            var ipv6 = in6_addr()
            guard inet_pton(AF_INET6, text, &ipv6) == 1 else { return nil }
            if var mapped = Self.mappedIPv4(ipv6) {
                return lookUp(ipv4: &mapped)
            }
            return lookUp(ipv6: &ipv6)
        }
    }

    // MARK: - Lookups

    private func lookUp(ipv4: inout in_addr) -> String? {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_addr = ipv4
        return withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { lookUp(sockaddr: $0) }
        }
    }

    private func lookUp(ipv6: inout in6_addr) -> String? {
        var socketAddress = sockaddr_in6()
        socketAddress.sin6_family = sa_family_t(AF_INET6)
        socketAddress.sin6_addr = ipv6
        return withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { lookUp(sockaddr: $0) }
        }
    }

    private func lookUp(sockaddr: UnsafePointer<sockaddr>) -> String? {
        var error: Int32 = 0
        var result = MMDB_lookup_sockaddr(mmdb, sockaddr, &error)
        // An IPv6 address in an IPv4-only database is an error, not a miss: either way, no country.
        guard error == MMDB_SUCCESS, result.found_entry else { return nil }
        var data = MMDB_entry_data_s()
        if clibmaxminddb_country_iso_code(&result.entry, &data) == MMDB_SUCCESS, let code = Self.isoCode(data) {
            return code
        }
        data = MMDB_entry_data_s()
        if clibmaxminddb_registered_country_iso_code(&result.entry, &data) == MMDB_SUCCESS {
            return Self.isoCode(data)
        }
        return nil
    }

    /// Two ASCII letters, lowercased; nil for anything else (missing, another type, "XK1", "É", "").
    private static func isoCode(_ data: MMDB_entry_data_s) -> String? {
        guard data.has_data, data.type == UInt32(MMDB_DATA_TYPE_UTF8_STRING), data.data_size == 2,
            let bytes = data.utf8_string
        else { return nil }
        guard let first = lowercaseLetter(UInt8(bitPattern: bytes[0])),
            let second = lowercaseLetter(UInt8(bitPattern: bytes[1]))
        else { return nil }
        // Two bytes fit in a small (inline) String, so this does not allocate.
        return String(unsafeUninitializedCapacity: 2) { buffer in
            buffer[0] = first
            buffer[1] = second
            return 2
        }
    }

    private static func lowercaseLetter(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte + 32
        default: nil
        }
    }

    /// The IPv4 address inside `::ffff:a.b.c.d`, else nil.
    private static func mappedIPv4(_ address: in6_addr) -> in_addr? {
        withUnsafeBytes(of: address) { bytes -> in_addr? in
            for index in 0..<10 where bytes[index] != 0 { return nil }
            guard bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
            var ipv4 = in_addr()
            withUnsafeMutableBytes(of: &ipv4) { target in
                for index in 0..<4 { target[index] = bytes[12 + index] }
            }
            return ipv4
        }
    }
}
