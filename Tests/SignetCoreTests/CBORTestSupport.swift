import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// What the CBOR, COSE key and authenticator data tests share: comparing values, and requiring
/// a refusal with its code and the byte it names.
enum CBORTestSupport {
    /// `hex` as bytes (without the code under test).
    static func bytes(_ hex: String) throws -> [UInt8] { try TestVectors.bytes(hex: hex) }

    /// Whether `a` and `b` are the same CBOR value: floats by their bits (so −0.0 is not 0.0),
    /// any NaN matching any NaN; everything else as `==` compares it.
    static func same(_ a: CBORValue, _ b: CBORValue) -> Bool {
        switch (a, b) {
        case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.array(let xs), .array(let ys)): return xs.count == ys.count && zip(xs, ys).allSatisfy { same($0, $1) }
        case (.map(let xs), .map(let ys)):
            return xs.count == ys.count && zip(xs, ys).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
        case (.tagged(let t, let x), .tagged(let u, let y)): return t == u && same(x, y)
        default: return a == b
        }
    }

    /// The byte offset a CBOR error message names ("… (at byte 12)"), or nil.
    static func namedOffset(_ message: String) -> Int? {
        guard let range = message.range(of: "(at byte ", options: .backwards) else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isNumber })
    }

    /// Requires `CBOR.decode(bytes)` under `limits` to refuse with `malformed`, naming byte
    /// `offset` and mentioning `fragment`; returns the error.
    @discardableResult
    static func refusal(
        _ bytes: [UInt8], limits: CBOR.Limits = CBOR.Limits(), atByte offset: Int, _ fragment: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SignetCoreError {
        let error = try thrown(SignetCoreError.self, sourceLocation: sourceLocation) {
            try CBOR.decode(bytes, source: "the item", limits: limits)
        }
        expectError(error, is: "malformed", mentioning: ["the item: CBOR: ", fragment, "(at byte \(offset))"], sourceLocation: sourceLocation)
        return error
    }

    /// Requires `COSEKey(value)` to refuse with `code`, mentioning `fragment`.
    static func coseRefusal(
        _ value: CBORValue, _ code: SignetErrorCode<SignetCoreError>, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try thrown(SignetCoreError.self, sourceLocation: sourceLocation) { try COSEKey(value, source: "the key") }
        expectError(error, is: code, mentioning: ["the key", fragment], sourceLocation: sourceLocation)
    }

    /// A COSE key map from `(label, value)` pairs, in that order.
    static func coseMap(_ entries: [(Int64, CBORValue)]) -> CBORValue {
        .map(entries.map { CBORMapEntry(CBORValue($0.0), $0.1) })
    }
}
