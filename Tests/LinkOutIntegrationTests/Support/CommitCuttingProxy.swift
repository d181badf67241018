import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of a test PostgreSQL server that loses a COMMIT's acknowledgement when told to
/// (`Support/commit_cutting_proxy.py`, run with python3): the COMMIT reaches the server and commits, the
/// server's answer is dropped and both connections are closed, so linkout sees the connection fail with
/// its batch's outcome unknown.
final class CommitCuttingProxy {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let port: Int
    let controlPort: Int
    private let helper: PythonHelper

    init(upstreamPort: Int) throws {
        helper = try PythonHelper(script: "commit_cutting_proxy.py", arguments: [String(upstreamPort)], what: "the commit-cutting proxy")
        port = helper.port
        controlPort = helper.controlPort
    }

    func stop() { helper.stop() }

    /// `url` with its port replaced by the proxy's.
    func route(_ url: String, serverPort: Int) -> String {
        url.replacingOccurrences(of: ":\(serverPort)/", with: ":\(port)/")
    }

    /// Cuts the next COMMIT that passes.
    func arm() throws {
        _ = try control("arm")
    }

    /// COMMITs cut so far.
    func cuts() throws -> Int {
        Int(try control("cuts")) ?? -1
    }

    /// Waits until `count` COMMITs have been cut; false if the timeout passed first.
    func waitForCuts(_ count: Int, timeout: TimeInterval = 20) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while try cuts() < count {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return true
    }

    private func control(_ command: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(controlPort).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw Failure(description: "connect to the proxy's control port: errno \(errno)") }
        let line = Array((command + "\n").utf8)
        guard write(fd, line, line.count) == line.count else { throw Failure(description: "write: errno \(errno)") }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { answer.append(byte) }
        return String(decoding: answer, as: UTF8.self)
    }
}
