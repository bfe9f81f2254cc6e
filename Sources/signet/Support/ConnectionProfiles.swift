import ArgumentParser
import Foundation
import SignetAPI
import SignetCore
import SignetPKCS11
import SignetX509

/// A named connection to a server: where it is, how it is trusted, and which keys to use —
/// references to keys only (a file's absolute path, `vault:SERVICE/ACCOUNT`, a `pkcs11:` URI
/// without a PIN), never key material.
struct ConnectionProfile: Codable, Equatable {
    var server: String
    var pins: [String]?
    var pinsFile: String?
    var roots: String?
    var appKey: String?
    var serverKey: String?
    var adminKey: String?
}

/// The profiles file: `$XDG_CONFIG_HOME/signet/profiles.json` (else
/// `~/.config/signet/profiles.json`), 0600 in a 0700 folder, refused when anyone but its owner
/// could have changed it (a profile decides which server and keys are trusted).
struct ProfileStore {
    struct Contents: Codable, Equatable {
        var version = 1
        var defaultProfile: String?
        var profiles: [String: ConnectionProfile] = [:]
    }

    let path: String

    /// The largest profiles file read.
    static let maximumSize = 1 << 20
    /// The environment variable naming the profile to use.
    static let profileVariable = "SIGNET_PROFILE"

    /// The store at its default place.
    static func standard() -> ProfileStore {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return ProfileStore(path: base + "/signet/profiles.json")
    }

    /// The profiles; none when the file does not exist.
    func load() throws -> Contents {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return Contents() }
            throw ProfileError("\(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ProfileError("\(path) is not a regular file") }
        guard info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw ProfileError("\(path) could have been changed by another user (owner or mode): only its owner may write it (chmod 600)")
        }
        let bytes = try FileInput.readAll(path: path, limit: Self.maximumSize)
        do {
            let contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
            guard contents.version == 1 else { throw ProfileError("\(path) is of version \(contents.version); this signet reads version 1") }
            return contents
        } catch let error as ProfileError {
            throw error
        } catch {
            throw ProfileError("\(path) is not a profiles file: \(error)")
        }
    }

    /// Writes `contents` atomically, 0600, making the folder (0700) if needed.
    func save(_ contents: Contents) throws {
        let folder = AtomicFile.parentFolder(of: path)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        try AtomicFile.write(Array(try encoder.encode(contents)) + [0x0A], to: path, permissions: .privateToOwner, overwrite: true)
    }

    /// The profile to use: `name` (from `--profile`), else `$SIGNET_PROFILE`, else the default
    /// when `useDefault`; nil when none applies. A name that is not stored is an error.
    func select(_ name: String?, useDefault: Bool) throws -> (name: String, profile: ConnectionProfile)? {
        let named = name ?? ProcessInfo.processInfo.environment[Self.profileVariable].flatMap { $0.isEmpty ? nil : $0 }
        let contents = try load()
        if let named {
            guard let profile = contents.profiles[named] else {
                let known = contents.profiles.keys.sorted()
                throw ValidationError("there is no profile \"\(PrintableText.terminalSafe(named))\" (\(known.isEmpty ? "none is stored" : "stored: " + known.joined(separator: ", "))); add it with `signet client profile add`")
            }
            return (named, profile)
        }
        guard useDefault, let name = contents.defaultProfile, let profile = contents.profiles[name] else { return nil }
        return (name, profile)
    }

    /// Checks a profile's name: the rule of app and admin names.
    static func checkName(_ name: String) throws {
        guard AdminAPI.isValidName(name) else { throw ValidationError("the profile name \"\(PrintableText.terminalSafe(name))\" \(AdminAPI.nameRule)") }
    }

    /// A key reference as a profile keeps it: a file as its absolute path (it must exist), a
    /// `vault:` reference as it is, a `pkcs11:` URI only without a PIN in it.
    static func keyReference(_ text: String, option: String) throws -> String {
        if text.hasPrefix("vault:") { return text }
        if text.lowercased().hasPrefix("pkcs11:") {
            guard PKCS11URI.redacted(text) == text else {
                throw ValidationError("\(option): a profile does not keep a PIN; give the URI with pin-source=FILE, or without a PIN to be asked for it")
            }
            return text
        }
        return try absoluteFile(text, option: option)
    }

    /// `path` made absolute; it must be a readable file.
    static func absoluteFile(_ path: String, option: String) throws -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let standardized = URL(fileURLWithPath: absolute).standardizedFileURL.path
        guard access(standardized, R_OK) == 0 else { throw ValidationError("\(option) \(PrintableText.terminalSafe(path)): cannot be read") }
        return standardized
    }
}

/// A profile that cannot be read, stored or used.
struct ProfileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
