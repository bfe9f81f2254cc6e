import SignetCore
import X509

/// Google's attestation revocation status list: the serial numbers of attestation
/// certificates (and intermediates) that must no longer be trusted. Google serves it at
/// https://android.googleapis.com/attestation/status; nothing here goes online, so the list
/// is read from a file the operator keeps current, or is the snapshot shipped with Signet
/// (``snapshotDate``).
public struct AndroidRevocationList: Sendable {
    /// One listed certificate.
    public struct Entry: Sendable, Equatable {
        /// `REVOKED` or `SUSPENDED`.
        public let status: String
        /// Why (`KEY_COMPROMISE`, `SOFTWARE_FLAW`, …), or empty.
        public let reason: String
    }

    /// The entries by serial number: lowercase hexadecimal without leading zeros.
    public let entries: [String: Entry]

    /// The largest list file read.
    public static let maximumSize = 16 << 20

    /// The snapshot shipped with Signet (``snapshotDate``).
    public static let shipped: AndroidRevocationList = {
        do {
            return try AndroidRevocationList(json: Array(snapshotJSON.utf8), source: "the shipped revocation list")
        } catch {
            preconditionFailure("the shipped revocation list does not parse: \(error)")
        }
    }()

    /// Reads a list in Google's format: `{"entries": {"<serial hex>": {"status": …, "reason": …}}}`.
    /// - Throws: ``AttestationError/malformed(source:detail:)``.
    public init(json bytes: [UInt8], source: String) throws {
        guard bytes.count <= Self.maximumSize else {
            throw AttestationError.malformed(source: source, detail: "over \(Self.maximumSize >> 20) MiB; not a revocation list")
        }
        let root: JSONValue
        do {
            root = try StrictJSON.parse(bytes, maximumDepth: 4)
        } catch {
            throw AttestationError.malformed(source: source, detail: "not valid JSON: \(error.message) (byte \(error.offset))")
        }
        guard case .object(let members) = root, case .object(let listed)? = members.first(where: { $0.name == "entries" })?.value else {
            throw AttestationError.malformed(source: source, detail: "no \"entries\" object")
        }
        var entries: [String: Entry] = [:]
        for member in listed {
            let serial = member.name.lowercased()
            guard !serial.isEmpty, serial.count <= 64, serial.allSatisfy(\.isHexDigit) else {
                throw AttestationError.malformed(source: source, detail: "\"\(PrintableText.escaped(member.name, limit: 80))\" is not a hexadecimal serial number")
            }
            guard case .object(let fields) = member.value, case .string(let status)? = fields.first(where: { $0.name == "status" })?.value else {
                throw AttestationError.malformed(source: source, detail: "the entry \(serial) has no \"status\" string")
            }
            var reason = ""
            if case .string(let text)? = fields.first(where: { $0.name == "reason" })?.value { reason = text }
            entries[Self.normalized(serial)] = Entry(status: status, reason: reason)
        }
        self.entries = entries
    }

    /// An empty list (no certificate is revoked).
    public init() { entries = [:] }

    /// The entry for `certificate`'s serial number, if listed.
    public func entry(for certificate: Certificate) -> (serial: String, entry: Entry)? {
        let serial = Self.normalized(Hex.encode(Array(certificate.serialNumber.bytes)))
        return entries[serial].map { (serial, $0) }
    }

    /// Lowercase hex without leading zeros ("0" for zero), as Google writes serials.
    static func normalized(_ hex: String) -> String {
        let trimmed = hex.lowercased().drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
}
