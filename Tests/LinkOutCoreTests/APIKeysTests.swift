import Testing

@testable import LinkOutCore

@Suite("APIKeys")
struct APIKeysTests {
    /// SHA-256 of "secret-key-one", computed outside linkout (`printf %s secret-key-one | sha256sum`).
    static let secret = "secret-key-one"
    static let secretDigest = "0b650f6f1c561fe3e7a17a39c7b47c6884f80bf08571d2bd8cd4b3e5e9bce390"

    static func problems(_ text: String) -> [String] {
        switch APIKeys.parse(text) {
        case .success: return []
        case .failure(let error): return error.problems.map { "\($0.key): \($0.rule)" }
        }
    }

    @Test("comments and blank lines are skipped; each entry keeps its name and digest")
    func parse() throws {
        let text =
            "# the checkout's keys\n\n  checkout \(Self.secretDigest)  # production\n\t\nbackoffice\t\(String(repeating: "AB", count: 32))\n"
        let keys = try APIKeys.parse(text).get()
        #expect(keys.entries.map(\.name) == ["checkout", "backoffice"])
        #expect(keys.entries[0].digest.count == 32)
        #expect(keys.entries[1].digest == [UInt8](repeating: 0xAB, count: 32))
    }

    /// In Swift "\r\n" is one `Character`, neither "\n" nor "\r": a file saved with Windows line ends must
    /// still be read line by line.
    @Test("a keys file with CRLF line ends is read")
    func crlf() throws {
        let keys = try APIKeys.parse("checkout \(Self.secretDigest)\r\nother \(String(repeating: "0", count: 64))\r\n").get()
        #expect(keys.entries.map(\.name) == ["checkout", "other"])
    }

    @Test("a bad line is named by its number")
    func badLine() {
        let good = "checkout \(Self.secretDigest)"
        for bad in [
            "checkout", "checkout abc", "checkout \(Self.secretDigest) extra", "checkout \(String(repeating: "g", count: 64))",
            "checkout \(String(repeating: "a", count: 62))",
        ] {
            #expect(
                Self.problems("# keys\n\(good)\n\(bad)\n") == [
                    "line 3: must be NAME and the key's SHA-256 in hex (64 characters), such as: checkout 9f86d0…"
                ], "\(bad)")
        }
    }

    @Test("a name given twice is refused")
    func duplicateName() {
        #expect(
            Self.problems("checkout \(Self.secretDigest)\ncheckout \(String(repeating: "0", count: 64))") == [
                "line 2: the name checkout is given twice"
            ])
    }

    @Test("a file without a key is refused", arguments: ["", "\n\n", "# nothing yet\n"])
    func empty(_ text: String) {
        #expect(Self.problems(text) == [": holds no key (add one with: linkout api-key new NAME)"])
    }

    @Test("name(of:) finds the right key, and nothing for a wrong one or one a character off")
    func name() throws {
        let keys = try APIKeys.parse("other \(String(repeating: "0", count: 64))\ncheckout \(Self.secretDigest)").get()
        #expect(keys.name(of: Array(Self.secret.utf8)) == "checkout")
        #expect(keys.name(of: Array("wrong".utf8)) == nil)
        #expect(keys.name(of: Array("secret-key-onE".utf8)) == nil)
        #expect(keys.name(of: Array("secret-key-on".utf8)) == nil)
        #expect(keys.name(of: [UInt8]()) == nil)
    }

    @Test("newKey makes a line parse accepts, under which name(of:) finds the key")
    func newKey() throws {
        let (key, line) = APIKeys.newKey(name: "checkout")
        #expect(key.utf8.count == 43, "32 bytes as unpadded base64url")
        #expect(!line.contains(key), "the line holds only the key's hash")
        let keys = try APIKeys.parse(line + "\n").get()
        #expect(keys.name(of: Array(key.utf8)) == "checkout")
        #expect(APIKeys.newKey(name: "checkout").key != key)
    }
}
