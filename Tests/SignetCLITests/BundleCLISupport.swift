import Foundation
import SignetTestSupport
import Testing

/// Helpers shared by the `signet bundle` CLI suites (BundleCLITests, BundleHostileTests).
extension Sandbox {
    /// Runs signet and requires exit 0.
    @discardableResult
    func signetOK(_ arguments: String..., environment: [String: String] = [:]) throws -> RunResult {
        let result = try signet(arguments: arguments, environment: environment)
        try #require(result.status == 0, "signet \(arguments.joined(separator: " ")) failed: \(result)")
        return result
    }

    /// Generates the private key `name` and its public key `name.pub`.
    func makeKey(_ name: String, type: String = "ed25519") throws {
        try signetOK("key", "generate", "-t", type, "-o", path(name), "-q")
        try signetOK("key", "public", path(name), "-o", path(name + ".pub"))
    }

    /// Writes files (relative path → content) below `folder`, making folders as needed.
    func makeTree(_ folder: String, _ files: [String: String]) throws {
        for (relative, content) in files {
            let url = URL(fileURLWithPath: path(folder)).appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(content.utf8).write(to: url)
        }
    }

    /// `signet bundle create` with the given keys (sandbox names), name, version and inputs.
    @discardableResult
    func createBundle(
        _ output: String, keys: [String], name: String = "app", version: Int, inputs: [String], extra: [String] = []
    ) throws -> RunResult {
        var arguments = ["bundle", "create", "-q", "--name", name, "--version", String(version), "-o", path(output)]
        for key in keys { arguments += ["--key", path(key)] }
        arguments += extra
        arguments += inputs.map { path($0) }
        let result = try signet(arguments: arguments)
        try #require(result.status == 0, "bundle create \(output) failed: \(result)")
        return result
    }

    /// A trust root at `output` pinning the public keys of `keys`.
    func trustInit(_ output: String, keys: [String], threshold: Int = 1) throws {
        var arguments = ["bundle", "trust", "init", "-q", "--threshold", String(threshold), "-o", path(output)]
        for key in keys { arguments += ["--key", path(key + ".pub")] }
        let result = try signet(arguments: arguments)
        try #require(result.status == 0, "trust init failed: \(result)")
    }

    /// `signet bundle verify` (not required to succeed).
    func bundleVerify(_ bundle: String, trust: String = "trust.json", state: String = "state", extra: [String] = []) throws -> RunResult {
        try signet(arguments: ["bundle", "verify", "-q", "--trust", path(trust), "--state", path(state)] + extra + [path(bundle)])
    }

    /// `signet bundle extract` (not required to succeed).
    func bundleExtract(_ bundle: String, to destination: String, trust: String = "trust.json", state: String = "state", extra: [String] = []) throws -> RunResult {
        try signet(arguments: ["bundle", "extract", "-q", "--trust", path(trust), "--state", path(state)] + extra + [path(bundle), path(destination)])
    }

    /// `signet bundle check` (not required to succeed).
    func bundleCheck(_ destination: String, trust: String = "trust.json", extra: [String] = []) throws -> RunResult {
        try signet(arguments: ["bundle", "check", "-q", "--trust", path(trust)] + extra + [path(destination)])
    }

    /// Runs a python3 program (its text, then arguments) in the sandbox; requires success.
    @discardableResult
    func python(_ program: String, _ arguments: String...) throws -> RunResult {
        try Python.runOK(program, arguments, in: folder, environment: SignetBinary.isolatedEnvironment(in: folder))
    }

    /// The SHA-256 of a sandbox file, as lowercase hex.
    func sha256(_ name: String) throws -> String {
        let result = try must("sha256sum", path(name))
        return String(result.out.prefix(64))
    }

    /// An extended attribute of a sandbox file, or nil when it has none.
    func xattr(_ name: String, _ attribute: String) throws -> String? {
        let result = try python(
            """
            import os, sys
            try: print(os.getxattr(sys.argv[1], sys.argv[2], follow_symlinks=False).decode(), end="")
            except OSError: print("<none>", end="")
            """, path(name), attribute)
        return result.out == "<none>" ? nil : result.out
    }

    /// One thing in the sandbox, as `snapshot()` records it.
    enum Node: Equatable {
        case file(Data)
        case folder
        case link(String)
        case other
    }

    /// Everything under the sandbox folder (or `below` it), by relative path; links not followed.
    func snapshot(below: String = "") throws -> [String: Node] {
        var nodes: [String: Node] = [:]
        func visit(_ relative: String) throws {
            let full = relative.isEmpty ? (below.isEmpty ? folder.path : path(below)) : (below.isEmpty ? path(relative) : path(below + "/" + relative))
            for name in try FileManager.default.contentsOfDirectory(atPath: full) {
                let child = relative.isEmpty ? name : relative + "/" + name
                let childPath = full + "/" + name
                let type = try FileManager.default.attributesOfItem(atPath: childPath)[.type] as? FileAttributeType
                switch type {
                case .typeDirectory?:
                    nodes[child] = .folder
                    try visit(child)
                case .typeRegular?: nodes[child] = .file(try Data(contentsOf: URL(fileURLWithPath: childPath)))
                case .typeSymbolicLink?: nodes[child] = .link(try FileManager.default.destinationOfSymbolicLink(atPath: childPath))
                default: nodes[child] = .other
                }
            }
        }
        try visit("")
        return nodes
    }

    /// The paths that differ between two snapshots, each marked + (new), - (gone) or ~ (changed).
    static func differences(_ before: [String: Node], _ after: [String: Node]) -> [String] {
        var result: [String] = []
        for (path, node) in after where before[path] != node { result.append((before[path] == nil ? "+ " : "~ ") + path) }
        for path in before.keys where after[path] == nil { result.append("- " + path) }
        return result.sorted()
    }
}
