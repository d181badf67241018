import Foundation

/// Why a file the config names cannot be read, in words an operator can act on: "cannot read X" alone
/// leaves them to guess whether it is missing, a folder, or another user's.
package enum Unreadable {
    package static func why(_ path: String) -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            return "no such file"
        }
        if isFolder.boolValue { return "it is a folder, not a file" }
        if !FileManager.default.isReadableFile(atPath: path) {
            return "not readable by this user (\(NSUserName())): check its owner and mode"
        }
        return "it could not be read"
    }

    /// `cannot read PATH (why)`.
    package static func message(_ path: String) -> String {
        "cannot read \(path) (\(why(path)))"
    }
}
