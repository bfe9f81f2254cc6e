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

    /// The profiles; none when the file does not exist. Opened once, without following a link
    /// or waiting on a FIFO, and checked as opened (owner, mode, a regular file), in a folder
    /// only its owner may change — so the file checked is the file read.
    func load() throws -> Contents {
        try Self.checkFolder(AtomicFile.parentFolder(of: path))
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return Contents() }
            if errno == ELOOP { throw ProfileError("\(path) is a symbolic link: a profiles file must be a file of its own") }
            throw ProfileError("\(path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw ProfileError("\(path) is not a regular file") }
        guard info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw ProfileError("\(path) could have been changed by another user (owner or mode): only its owner may write it (chmod 600)")
        }
        guard info.st_size <= Self.maximumSize else { throw ProfileError("\(path) is over \(Self.maximumSize) bytes") }
        let bytes = (try? handle.read(upToCount: Self.maximumSize + 1)) ?? Data()
        guard bytes.count <= Self.maximumSize else { throw ProfileError("\(path) is over \(Self.maximumSize) bytes") }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: bytes)
        } catch {
            throw ProfileError("\(path) is not a profiles file: \(error)")
        }
        guard contents.version == 1 else { throw ProfileError("\(path) is of version \(contents.version); this signet reads version 1") }
        if let bad = (Array(contents.profiles.keys) + [contents.defaultProfile].compactMap { $0 }).first(where: { !AdminAPI.isValidName($0) }) {
            throw ProfileError("\(path) names a profile \"\(PrintableText.terminalSafe(bad))\", which is not a profile name (\(AdminAPI.nameRule))")
        }
        return contents
    }

    /// The folder of the profiles file, when it exists, is its owner's, and nobody else may add
    /// or swap files in it.
    static func checkFolder(_ folder: String) throws {
        var info = stat()
        guard lstat(folder, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw ProfileError("\(folder): the folder of the profiles file must be its owner's alone (chmod 700)")
        }
    }

    /// Writes `contents` atomically, 0600, making the folder (0700) if needed.
    func save(_ contents: Contents) throws {
        let folder = AtomicFile.parentFolder(of: path)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Self.checkFolder(folder)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        try AtomicFile.write(Array(try encoder.encode(contents)) + [0x0A], to: path, permissions: .privateToOwner, overwrite: true)
    }

    /// The profile to use: `name` (from `--profile`), else — when `useDefault` (no `--server`
    /// given) — `$SIGNET_PROFILE`, else the default; nil when none applies. A name that is not
    /// stored is an error.
    func select(_ name: String?, useDefault: Bool) throws -> (name: String, profile: ConnectionProfile)? {
        let fromEnvironment = useDefault ? ProcessInfo.processInfo.environment[Self.profileVariable].flatMap { $0.isEmpty ? nil : $0 } : nil
        let named = name ?? fromEnvironment
        if let named { try Self.checkName(named) }
        let contents = try load()
        if let named { return (named, try Self.profile(named, in: contents)) }
        guard useDefault, let name = contents.defaultProfile, let profile = contents.profiles[name] else { return nil }
        return (name, profile)
    }

    /// The stored profile `name`; one that is not stored is an error naming those that are.
    static func profile(_ name: String, in contents: Contents) throws -> ConnectionProfile {
        guard let profile = contents.profiles[name] else {
            let known = contents.profiles.keys.sorted()
            throw ValidationError("there is no profile \"\(PrintableText.terminalSafe(name))\" (\(known.isEmpty ? "none is stored" : "stored: " + known.joined(separator: ", "))); add it with `signet client profile add`")
        }
        return profile
    }

    /// Changes the stored profile `name` (which must exist) with `change`, and saves.
    func edit(_ name: String, _ change: (inout Contents) -> Void) throws {
        try Self.checkName(name)
        var contents = try load()
        _ = try Self.profile(name, in: contents)
        change(&contents)
        try save(contents)
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
