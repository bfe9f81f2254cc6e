import SignetCore

/// Encrypts to recipients (age v1), streaming.
///
/// Each file gets a fresh random 16-byte file key, which every recipient wraps into the
/// header's stanzas; the header is authenticated with a MAC under the file key, and the
/// plaintext is sealed in 64 KiB chunks (age-encryption.org/v1). Encryption runs in constant
/// memory, a few MiB whatever the input's size, and seals a batch of chunks on all cores at
/// once.
///
/// ```swift
/// let encryptor = try AgeEncryptor(recipients: [recipient], armor: true)
/// let file = try encryptor.encrypt(Array("hello".utf8))
/// ```
public struct AgeEncryptor: Sendable {
    private let recipients: [any AgeRecipient]
    private let armor: Bool

    /// An encryptor to `recipients`, writing binary age files or, with `armor`, ASCII-armored
    /// ones.
    ///
    /// - Throws: ``AgeError/invalidArgument(detail:)`` when there is no recipient, or when a
    ///   passphrase recipient comes with any other (the spec requires an scrypt stanza to be a
    ///   file's only one).
    public init(recipients: [any AgeRecipient], armor: Bool = false) throws {
        guard !recipients.isEmpty else {
            throw AgeError.invalidArgument(detail: "no recipient: a file must be encrypted to at least one")
        }
        if recipients.count > 1, recipients.contains(where: { $0.isPassphrase }) {
            throw AgeError.invalidArgument(detail: "a passphrase must be a file's only recipient")
        }
        if recipients.contains(where: { $0.isPostQuantum }), recipients.contains(where: { !$0.isPostQuantum }) {
            throw AgeError.invalidArgument(
                detail: "post-quantum (age1pq1…) recipients cannot be mixed with others: the file would be only as strong as the weakest")
        }
        self.recipients = recipients
        self.armor = armor
    }

    /// Reads plaintext with `read` (fills the buffer, returns bytes read, 0 at end) and writes
    /// the age file through `write`.
    ///
    /// `write` receives the file in order, in pieces of at most a batch of sealed chunks (about
    /// 1 MiB, a third more when armored); nothing is kept after it returns. `read` is asked
    /// for up to a batch of plaintext at a time.
    ///
    /// - Throws: ``AgeError/io(path:detail:)`` when `read` or `write` throws (an ``AgeError``
    ///   they throw passes through, and a `SignetCoreError.io` keeps its path); what a
    ///   recipient throws while wrapping the file key.
    public func encrypt(
        read: (UnsafeMutableRawBufferPointer) throws -> Int, write: ([UInt8]) throws -> Void
    ) throws {
        let outcome = withoutActuallyEscaping(read) { (escapableRead) -> Result<Void, any Error> in
            withoutActuallyEscaping(write) { (escapableWrite) -> Result<Void, any Error> in
                Result { () throws -> Void in
                    try run(
                        input: AgeClosureSource(escapableRead, path: "input"),
                        output: AgeClosureSink(escapableWrite, path: "output"))
                }
            }
        }
        try outcome.get()
    }

    /// ``encrypt(read:write:)`` with a writer of buffers, which are valid only during each
    /// call: the sealed chunks reach it without being copied into arrays first (what
    /// `signet encrypt` uses to write files and pipes).
    ///
    /// - Throws: as ``encrypt(read:write:)``.
    public func encrypt(
        read: (UnsafeMutableRawBufferPointer) throws -> Int, writeBuffer: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let outcome = withoutActuallyEscaping(read) { (escapableRead) -> Result<Void, any Error> in
            withoutActuallyEscaping(writeBuffer) { (escapableWrite) -> Result<Void, any Error> in
                Result { () throws -> Void in
                    try run(
                        input: AgeClosureSource(escapableRead, path: "input"),
                        output: AgeClosureSink(buffers: escapableWrite, path: "output"))
                }
            }
        }
        try outcome.get()
    }

    /// Encrypts `plaintext` held in memory and returns the whole age file.
    ///
    /// - Throws: as ``encrypt(read:write:)``.
    public func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        var offset = 0
        var file: [UInt8] = []
        try encrypt(
            read: { buffer in
                let count = min(buffer.count, plaintext.count - offset)
                buffer.copyBytes(from: plaintext[offset..<(offset + count)])
                offset += count
                return count
            },
            write: { file += $0 })
        return file
    }

    private func run(input: any AgeByteSource, output: any AgeByteSink) throws {
        var keyBytes = RandomBytes.make(AgeDecryptor.fileKeySize)
        let fileKey = SecretBytes(consuming: &keyBytes)
        var stanzas: [AgeStanza] = []
        for recipient in recipients {
            let wrapped = try recipient.wrap(fileKey: fileKey)
            stanzas += wrapped
        }
        let header = try AgeHeader.encode(stanzas: stanzas, fileKey: fileKey)
        let nonce = RandomBytes.make(AgePayload.nonceSize)
        let sink: any AgeByteSink = armor ? AgeArmorEncoder(output) : output
        try sink.write(header + nonce)
        try AgePayload.encrypt(key: AgePayload.key(fileKey: fileKey, nonce: nonce), from: input, to: sink)
        try sink.finish()
    }
}

/// Decrypts with identities, streaming; detects armor.
///
/// The header is parsed strictly, each identity is tried on its stanzas, and the header's
/// MAC is checked before the payload is touched. The payload is then opened chunk by chunk:
/// a chunk's plaintext is written only once the chunk has authenticated, so whatever is
/// written before an error is authentic, but a decryption that throws has not written the
/// whole file (a caller writing to a file should write to a temporary one and keep it only on
/// success).
///
/// ```swift
/// let plaintext = try AgeDecryptor(identities: [identity]).decrypt(file, source: "notes.age")
/// ```
public struct AgeDecryptor: Sendable {
    /// The size of an age file key.
    static let fileKeySize = 16

    private let identities: [any AgeIdentity]

    /// A decryptor trying `identities` in order; the first that unwraps the file key wins.
    public init(identities: [any AgeIdentity]) {
        self.identities = identities
    }

    /// Reads an age file, binary or armored, with `read` (fills the buffer, returns bytes
    /// read, 0 at end) and writes its plaintext through `write`, naming the file `source` in
    /// errors.
    ///
    /// - Throws: ``AgeError/malformedHeader(source:detail:)`` for a header or armor that is not
    ///   strictly age v1 (and for an scrypt stanza that is not the header's only one);
    ///   ``AgeError/unsupported(source:detail:)`` for another format version;
    ///   ``AgeError/noMatchingIdentity(source:detail:)`` when no identity unwraps the file key
    ///   (the detail lists the stanza types found); what an identity throws;
    ///   ``AgeError/headerMACMismatch(source:)``; ``AgeError/payloadInvalid(source:detail:)``
    ///   for a payload that is truncated, altered, or followed by data;
    ///   ``AgeError/io(path:detail:)`` when `read` (naming `source`) or `write` (naming
    ///   `output`) throws.
    public func decrypt(
        read: (UnsafeMutableRawBufferPointer) throws -> Int, write: ([UInt8]) throws -> Void, source: String
    ) throws {
        let outcome = withoutActuallyEscaping(read) { (escapableRead) -> Result<Void, any Error> in
            withoutActuallyEscaping(write) { (escapableWrite) -> Result<Void, any Error> in
                Result { () throws -> Void in
                    try run(
                        input: AgeClosureSource(escapableRead, path: source),
                        output: AgeClosureSink(escapableWrite, path: "output"), source: source)
                }
            }
        }
        try outcome.get()
    }

    /// ``decrypt(read:write:source:)`` with a writer of buffers, valid only during each call:
    /// the plaintext reaches it without being copied into arrays first.
    ///
    /// - Throws: as ``decrypt(read:write:source:)``.
    public func decrypt(
        read: (UnsafeMutableRawBufferPointer) throws -> Int, writeBuffer: (UnsafeRawBufferPointer) throws -> Void, source: String
    ) throws {
        let outcome = withoutActuallyEscaping(read) { (escapableRead) -> Result<Void, any Error> in
            withoutActuallyEscaping(writeBuffer) { (escapableWrite) -> Result<Void, any Error> in
                Result { () throws -> Void in
                    try run(
                        input: AgeClosureSource(escapableRead, path: source),
                        output: AgeClosureSink(buffers: escapableWrite, path: "output"), source: source)
                }
            }
        }
        try outcome.get()
    }

    /// Decrypts the age file `file` (binary or armored) held in memory and returns its
    /// plaintext, naming it `source` in errors.
    ///
    /// - Throws: as ``decrypt(read:write:source:)``; nothing is returned unless the whole
    ///   file authenticates.
    public func decrypt(_ file: [UInt8], source: String) throws -> [UInt8] {
        var offset = 0
        var plaintext: [UInt8] = []
        try decrypt(
            read: { buffer in
                let count = min(buffer.count, file.count - offset)
                buffer.copyBytes(from: file[offset..<(offset + count)])
                offset += count
                return count
            },
            write: { plaintext += $0 }, source: source)
        return plaintext
    }

    private func run(input: any AgeByteSource, output: any AgeByteSink, source: String) throws {
        let raw = AgeBufferedSource(input)
        let file = try AgeArmor.isArmored(raw) ? AgeBufferedSource(AgeArmorDecoder(raw, source: source)) : raw
        let header = try AgeHeader.parse(from: file, source: source)
        let fileKey = try unwrapFileKey(header.stanzas, source: source)
        try header.verifyMAC(fileKey: fileKey, source: source)
        let nonceBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: AgePayload.nonceSize, alignment: 1)
        defer { nonceBuffer.deallocate() }
        let count = try file.readFull(into: nonceBuffer)
        guard count == AgePayload.nonceSize else {
            throw AgeError.malformedHeader(
                source: source, detail: "the file ends \(count) bytes into the 16-byte payload nonce after the header")
        }
        let nonce = Array(nonceBuffer)
        try AgePayload.decrypt(key: AgePayload.key(fileKey: fileKey, nonce: nonce), from: file, to: output, source: source)
    }

    /// The file key from the first identity that unwraps one.
    private func unwrapFileKey(_ stanzas: [AgeStanza], source: String) throws -> SecretBytes {
        // The spec: an scrypt stanza must be the header's only one, whoever decrypts.
        if stanzas.count > 1, stanzas.contains(where: { $0.type == "scrypt" }) {
            throw AgeError.malformedHeader(
                source: source,
                detail: "a passphrase-encrypted file must have its scrypt stanza alone, this header has \(stanzas.count) stanzas")
        }
        for identity in identities {
            guard let fileKey = try identity.unwrap(stanzas: stanzas, source: source) else { continue }
            guard fileKey.count == Self.fileKeySize else {
                throw AgeError.malformedHeader(source: source, detail: "the file key unwrapped is \(fileKey.count) bytes, not 16")
            }
            return fileKey
        }
        var types: [String] = []
        for stanza in stanzas where !types.contains(stanza.type) { types.append(stanza.type) }
        let found = "stanza types: " + types.joined(separator: ", ")
        throw AgeError.noMatchingIdentity(source: source, detail: identities.isEmpty ? "no identity was given; " + found : found)
    }
}
