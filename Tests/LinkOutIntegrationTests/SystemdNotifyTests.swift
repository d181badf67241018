import Foundation
import Glibc
import LinkOutTestSupport
import Testing

/// The unit is `Type=notify`: `systemctl start linkout` waits for `READY=1` on `$NOTIFY_SOCKET`, so it
/// returns once linkout listens and fails when linkout refuses to start. Here the test is systemd.
@Suite struct SystemdNotifyTests {
    /// A datagram socket bound where `$NOTIFY_SOCKET` will point (a path, or `@name` for the abstract
    /// namespace), as systemd's is.
    final class NotifySocket {
        let fd: Int32
        let name: String

        init(abstract: Bool, folder: TemporaryFolder) throws {
            name = abstract ? "@linkout-test-\(UUID().uuidString)" : folder.file("notify")
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            try #require(fd >= 0)
            var path = Array(name.utf8)
            if abstract { path[0] = 0 } else { path.append(0) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
            let length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + path.count)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            try #require(bound == 0, "bind \(name): errno \(errno)")
            var timeout = timeval(tv_sec: 0, tv_usec: 500_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// The datagrams received until none came for half a second.
        func received() -> [String] {
            var messages: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count <= 0 { return messages }
                messages.append(String(decoding: buffer[..<count], as: UTF8.self))
            }
        }
    }

    @Test(arguments: [false, true])
    func readyIsSentOnceListening(abstract: Bool) throws {
        let folder = TemporaryFolder()
        let notify = try NotifySocket(abstract: abstract, folder: folder)
        let server = try GatewayProcess(
            store: folder.file("store.sqlite"), wrapper: ["/usr/bin/env", "NOTIFY_SOCKET=\(notify.name)"], folder: folder)
        defer { server.stop() }
        #expect(notify.received() == ["READY=1"])
        // Ready means serving.
        #expect(try HTTPConnection(port: server.port).request("GET", "/healthz").status == 200)
    }

    @Test func aRefusedConfigIsNeverReady() throws {
        let folder = TemporaryFolder()
        let notify = try NotifySocket(abstract: false, folder: folder)
        let config = folder.write(
            "config.json", TestConfig.json(links: #"[{"id":"a","path":"/a","country":"xx","destinations":[{"url":"https://a.example/"}]}]"#)
        )
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.name
        let result = try Command.run(
            LinkoutBinary.path,
            ["serve", "--config", config, "--listen", "127.0.0.1:0", "--admin-listen", "off", "--store", folder.file("s.sqlite")],
            environment: environment)
        #expect(result.status == 1)
        #expect(notify.received().isEmpty)
    }
}
