import CPKCS11

/// A `CK_ATTRIBUTE` template built from Swift values, laid out in one buffer for the length of
/// a call.
struct AttributeTemplate {
    private var entries: [(type: CK_ATTRIBUTE_TYPE, value: [UInt8])] = []

    /// An attribute holding `bytes` as they are.
    mutating func add(_ type: CK_ATTRIBUTE_TYPE, bytes: [UInt8]) {
        entries.append((type, bytes))
    }

    /// A `CK_BBOOL` attribute.
    mutating func add(_ type: CK_ATTRIBUTE_TYPE, bool: Bool) {
        entries.append((type, [UInt8(bool ? 1 : 0)]))
    }

    /// A `CK_ULONG` attribute (object classes, key types, sizes), in the machine's byte order.
    mutating func add(_ type: CK_ATTRIBUTE_TYPE, ulong: CK_ULONG) {
        entries.append((type, withUnsafeBytes(of: ulong) { Array($0) }))
    }

    /// A UTF-8 text attribute (labels), without a terminating NUL.
    mutating func add(_ type: CK_ATTRIBUTE_TYPE, text: String) {
        entries.append((type, Array(text.utf8)))
    }

    /// Calls `body` with the template as C sees it; the pointers live only during the call.
    func withAttributes<R>(_ body: (UnsafeMutablePointer<CK_ATTRIBUTE>?, CK_ULONG) throws -> R) throws -> R {
        // Each value starts on an 8-byte boundary, so a module may read a CK_ULONG in place.
        var offsets: [Int] = []
        var total = 0
        for entry in entries {
            offsets.append(total)
            total += (entry.value.count + 7) / 8 * 8
        }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: total + 8, alignment: 8)
        defer { storage.deallocate() }
        var attributes: [CK_ATTRIBUTE] = []
        for (index, entry) in entries.enumerated() {
            let start = storage + offsets[index]
            entry.value.withUnsafeBytes { raw in
                if let base = raw.baseAddress, raw.count > 0 { start.copyMemory(from: base, byteCount: raw.count) }
            }
            // An empty value still points somewhere: some modules refuse a null pointer.
            attributes.append(CK_ATTRIBUTE(type: entry.type, pValue: start, ulValueLen: CK_ULONG(entry.value.count)))
        }
        return try attributes.withUnsafeMutableBufferPointer { buffer in
            try body(buffer.baseAddress, CK_ULONG(buffer.count))
        }
    }
}

extension PKCS11Module {
    /// The longest attribute value read (a 16384-bit modulus is 2 KiB).
    static let maximumAttributeLength: CK_ULONG = 65_536

    /// The value of one attribute of `object`; nil when the object has no such attribute, or
    /// it is sensitive, or the module says it is unavailable.
    func attribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE, session: CK_SESSION_HANDLE) throws -> [UInt8]? {
        guard let getAttributeValue = functions.pointee.C_GetAttributeValue else { throw PKCS11Error.missing("C_GetAttributeValue") }
        var query = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: 0)
        let rv = getAttributeValue(session, object, &query, 1)
        if rv == CKR_ATTRIBUTE_TYPE_INVALID || rv == CKR_ATTRIBUTE_SENSITIVE { return nil }
        guard rv == CKR_OK else { throw PKCS11Error.failed("C_GetAttributeValue", rv) }
        if query.ulValueLen == CK_ULONG.max { return nil }  // CK_UNAVAILABLE_INFORMATION
        guard query.ulValueLen <= Self.maximumAttributeLength else {
            throw PKCS11Error.misbehaved("C_GetAttributeValue", "it reports an attribute of \(query.ulValueLen) bytes")
        }
        let length = Int(query.ulValueLen)
        if length == 0 { return [] }
        var value = [UInt8](repeating: 0, count: length)
        var read = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: CK_ULONG(length))
        let second: CK_RV = value.withUnsafeMutableBytes { raw in
            read.pValue = raw.baseAddress
            return getAttributeValue(session, object, &read, 1)
        }
        guard second == CKR_OK else { throw PKCS11Error.failed("C_GetAttributeValue", second) }
        guard read.ulValueLen <= CK_ULONG(length) else {
            throw PKCS11Error.misbehaved("C_GetAttributeValue", "it wrote \(read.ulValueLen) bytes into a buffer of \(length)")
        }
        return Array(value[0..<Int(read.ulValueLen)])
    }

    /// An attribute that must be there and non-empty (key material).
    func requiredAttribute(_ type: CK_ATTRIBUTE_TYPE, _ name: String, of object: CK_OBJECT_HANDLE, session: CK_SESSION_HANDLE) throws -> [UInt8] {
        guard let value = try attribute(type, of: object, session: session), !value.isEmpty else {
            throw PKCS11Error.misbehaved("C_GetAttributeValue", "the key has no \(name), or an empty one")
        }
        return value
    }

    /// A `CK_ULONG` attribute (class, key type); nil when absent.
    func ulongAttribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE, session: CK_SESSION_HANDLE) throws -> CK_ULONG? {
        guard let value = try attribute(type, of: object, session: session) else { return nil }
        guard value.count == MemoryLayout<CK_ULONG>.size else {
            throw PKCS11Error.misbehaved("C_GetAttributeValue", "a CK_ULONG attribute of \(value.count) bytes")
        }
        return value.withUnsafeBytes { $0.loadUnaligned(as: CK_ULONG.self) }
    }

    /// A `CK_BBOOL` attribute; `fallback` when absent.
    func boolAttribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE, session: CK_SESSION_HANDLE, fallback: Bool) throws -> Bool {
        guard let value = try attribute(type, of: object, session: session), value.count == 1 else { return fallback }
        return value[0] != 0
    }

    /// The most objects one search returns.
    static let maximumObjects = 10_000

    /// The handles of the objects that fit `template`.
    func findObjects(_ template: AttributeTemplate, session: CK_SESSION_HANDLE) throws -> [CK_OBJECT_HANDLE] {
        guard let findInit = functions.pointee.C_FindObjectsInit, let find = functions.pointee.C_FindObjects,
            let findFinal = functions.pointee.C_FindObjectsFinal
        else { throw PKCS11Error.missing("C_FindObjects") }
        let started: CK_RV = try template.withAttributes { attributes, count in findInit(session, attributes, count) }
        guard started == CKR_OK else { throw PKCS11Error.failed("C_FindObjectsInit", started) }
        defer { _ = findFinal(session) }
        var handles: [CK_OBJECT_HANDLE] = []
        var batch = [CK_OBJECT_HANDLE](repeating: 0, count: 64)
        while true {
            var found: CK_ULONG = 0
            let rv: CK_RV = batch.withUnsafeMutableBufferPointer { buffer in
                find(session, buffer.baseAddress, CK_ULONG(buffer.count), &found)
            }
            guard rv == CKR_OK else { throw PKCS11Error.failed("C_FindObjects", rv) }
            guard found <= CK_ULONG(batch.count) else {
                throw PKCS11Error.misbehaved("C_FindObjects", "it found \(found) objects for a buffer of \(batch.count)")
            }
            if found == 0 { return handles }
            handles += batch[0..<Int(found)]
            guard handles.count <= Self.maximumObjects else {
                throw PKCS11Error.misbehaved("C_FindObjects", "more than \(Self.maximumObjects) objects match")
            }
        }
    }
}

/// Just enough DER for `CKA_EC_PARAMS` and `CKA_EC_POINT`: one element of a known tag, short
/// or long length (at most two length bytes), spanning exactly the bytes given.
enum TinyDER {
    static let octetString: UInt8 = 0x04
    static let objectIdentifier: UInt8 = 0x06

    /// The content of the single element of tag `tag` that `bytes` are; nil for anything else.
    static func content(of bytes: [UInt8], tag: UInt8) -> [UInt8]? {
        guard bytes.count >= 2, bytes[0] == tag else { return nil }
        var length = Int(bytes[1])
        var header = 2
        if length & 0x80 != 0 {
            let octets = length & 0x7f
            guard octets == 1 || octets == 2, bytes.count >= 2 + octets else { return nil }
            length = octets == 1 ? Int(bytes[2]) : Int(bytes[2]) << 8 | Int(bytes[3])
            // DER: the long form only where the short one cannot say it, without leading zeros.
            guard length >= 0x80, octets == 1 || length > 0xff else { return nil }
            header = 2 + octets
        }
        guard bytes.count == header + length else { return nil }
        return Array(bytes[header...])
    }

    /// An object identifier's content in dotted form (`1.3.101.113`), for messages; nil when
    /// it is not a well-formed one.
    static func dottedOID(_ content: [UInt8]) -> String? {
        guard let first = content.first, content.count <= 64, content.last! & 0x80 == 0 else { return nil }
        var arcs: [UInt64] = first < 80 ? [UInt64(first / 40), UInt64(first % 40)] : [2, UInt64(first) - 80]
        var value: UInt64 = 0
        for byte in content.dropFirst() {
            guard value < (1 << 56) else { return nil }
            value = value << 7 | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 {
                arcs.append(value)
                value = 0
            }
        }
        return arcs.map { String($0) }.joined(separator: ".")
    }
}
