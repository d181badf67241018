import Testing

@testable import LinkOutCore

/// The one rule for what a reload leaves for a restart.
@Suite("RestartOnlySettings")
struct RestartOnlySettingsTests: ConfigChecking {
    @Test("names each section a running server read once, and nothing a reload takes")
    func namesWhatWaits() throws {
        let old = try load(ConfigLoaderTests.config()).get()
        #expect(RestartOnlySettings(old).changed(in: RestartOnlySettings(old)).isEmpty)

        // What a reload takes at once: links, apps, pages, signing, the keys files' paths.
        var taken = old
        taken.links.removeAll()
        taken.signing = SigningSettings(secretFile: "other", secret: Array("x".utf8))
        taken.server.adminKeysFile = "admin-keys"
        #expect(RestartOnlySettings(old).changed(in: RestartOnlySettings(taken)).isEmpty)

        var waits = old
        waits.server.threads = 3
        waits.storePath = "other.sqlite"
        waits.accessLog.destination = .off
        waits.api = APISettings(listen: ListenAddress(host: "127.0.0.1", port: 8081), keysFile: "keys")
        waits.notifications = NotificationSettings(path: "/apple")
        #expect(
            RestartOnlySettings(old).changed(in: RestartOnlySettings(waits)) == ["server", "store", "accessLog", "api", "notifications"])

        // An API whose keys file moved is the same API: the keys are read again on reload.
        var moved = waits
        moved.api?.keysFile = "elsewhere"
        #expect(RestartOnlySettings(waits).changed(in: RestartOnlySettings(moved)).isEmpty)
        // A notification root replaced on disk is a change, though the file's name is the same.
        moved.notifications?.rootCertificatesPEM = ["-----BEGIN CERTIFICATE-----"]
        #expect(RestartOnlySettings(waits).changed(in: RestartOnlySettings(moved)) == ["notifications"])
    }
}
