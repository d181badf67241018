import Testing

@testable import LinkOutServer

/// Which stores count as one for port sharing.
@Suite struct PortSharingTagTests {
    @Test func aPostgreSQLStoreIsOneWhateverItsSchemesSpellingOrItsPassword() {
        let tag = PortSharing.storeTag("postgres://linkout:secret@127.0.0.1:5432/linkout")
        #expect(PortSharing.storeTag("postgresql://linkout:other@127.0.0.1:5432/linkout") == tag)
        #expect(PortSharing.storeTag("postgres://linkout@127.0.0.1:5432/other") != tag)
    }
}
