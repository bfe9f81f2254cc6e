import SignetCore
import Testing

@testable import SignetPKCS11

/// The little DER SignetPKCS11 reads itself: `CKA_EC_PARAMS` and `CKA_EC_POINT`, in the forms
/// modules give them.
@Suite("PKCS#11 EC parameters and points")
struct PKCS11DERTests {
    @Test("one element of the expected tag, spanning exactly the bytes, with a minimal length")
    func elements() {
        #expect(TinyDER.content(of: [0x04, 0x02, 0xAA, 0xBB], tag: 0x04) == [0xAA, 0xBB])
        #expect(TinyDER.content(of: [0x04, 0x00], tag: 0x04) == [])
        let long = [UInt8](repeating: 7, count: 200)
        #expect(TinyDER.content(of: [0x04, 0x81, 200] + long, tag: 0x04) == long)
        let longer = [UInt8](repeating: 9, count: 300)
        #expect(TinyDER.content(of: [0x04, 0x82, 0x01, 0x2C] + longer, tag: 0x04) == longer)
        #expect(TinyDER.content(of: [0x04, 0x81, 0x02, 0xAA, 0xBB], tag: 0x04) == nil, "long form for a short length")
        #expect(TinyDER.content(of: [0x04, 0x82, 0x00, 0x90] + [UInt8](repeating: 0, count: 0x90), tag: 0x04) == nil, "a leading zero")
        #expect(TinyDER.content(of: [0x04, 0x83, 0x00, 0x00, 0x01, 0x00], tag: 0x04) == nil, "three length bytes")
        #expect(TinyDER.content(of: [0x04, 0x02, 0xAA, 0xBB, 0xCC], tag: 0x04) == nil, "trailing bytes")
        #expect(TinyDER.content(of: [0x04, 0x03, 0xAA, 0xBB], tag: 0x04) == nil, "truncated")
        #expect(TinyDER.content(of: [0x03, 0x02, 0xAA, 0xBB], tag: 0x04) == nil, "another tag")
        #expect(TinyDER.content(of: [0x04], tag: 0x04) == nil)
        #expect(TinyDER.content(of: [], tag: 0x04) == nil)
    }

    @Test("object identifiers print dotted")
    func oids() {
        #expect(TinyDER.dottedOID([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]) == "1.2.840.10045.3.1.7")
        #expect(TinyDER.dottedOID([0x2B, 0x65, 0x71]) == "1.3.101.113")
        #expect(TinyDER.dottedOID([0x2B, 0x81]) == nil, "an unfinished arc")
        #expect(TinyDER.dottedOID([]) == nil)
        #expect(CurveParameters.describe([0x06, 0x03, 0x2B, 0x65, 0x71]) == "the curve 1.3.101.113")
        #expect(CurveParameters.describe([0x13, 0x0A] + Array("edwards448".utf8)) == "the curve \"edwards448\"")
        #expect(CurveParameters.describe([0x30, 0x00]) == "explicit or unknown curve parameters")
        #expect(CurveParameters.edwards25519 == [0x13, 0x0C, 0x65, 0x64, 0x77, 0x61, 0x72, 0x64, 0x73, 0x32, 0x35, 0x35, 0x31, 0x39])
    }

    @Test("EC points are read wrapped in an OCTET STRING, as the standard says, or raw")
    func points() throws {
        let p256 = try PrivateKey.generate(.p256).publicKey
        let point = Array(p256.spkiDER.suffix(65))
        #expect(point.first == 0x04)
        #expect(CurveParameters.point([0x04, 0x41] + point, lengths: [65, 33]) == point)
        #expect(CurveParameters.point(point, lengths: [65, 33]) == point)
        #expect(CurveParameters.point(Array(point.dropLast()), lengths: [65, 33]) == nil)

        // A raw P-384 point whose X starts with 0x5F reads as a DER OCTET STRING of 95 bytes:
        // that is no P-384 point, so the raw reading wins.
        let raw384 = [0x04, 0x5F] + [UInt8](repeating: 0x11, count: 95)
        #expect(CurveParameters.point(raw384, lengths: [97, 49]) == raw384)

        let ed25519 = try PrivateKey.generate(.ed25519).publicKey
        let bytes = Array(ed25519.spkiDER.suffix(32))
        #expect(CurveParameters.point([0x04, 0x20] + bytes, lengths: [32]) == bytes)
        #expect(CurveParameters.point(bytes, lengths: [32]) == bytes)
        #expect(try PublicKey(ed25519: bytes, source: "token") == ed25519)
        #expect(try PublicKey(ecPoint: point, kind: .p256, source: "token") == p256)
    }

    @Test("a template lays out every value, empty ones included, at 8-byte boundaries")
    func template() throws {
        var template = AttributeTemplate()
        template.add(1, bool: true)
        template.add(2, ulong: 0x0102_0304)
        template.add(3, text: "label")
        template.add(4, bytes: [])
        let seen: [(UInt, [UInt8])] = try template.withAttributes { attributes, count in
            #expect(count == 4)
            let buffer = UnsafeBufferPointer(start: try #require(attributes), count: Int(count))
            return try buffer.map { attribute in
                let start = try #require(attribute.pValue)
                #expect(Int(bitPattern: start) % 8 == 0)
                return (UInt(attribute.type), Array(UnsafeRawBufferPointer(start: start, count: Int(attribute.ulValueLen))))
            }
        }
        #expect(seen.map { $0.0 } == [1, 2, 3, 4])
        #expect(seen[0].1 == [1])
        #expect(seen[1].1 == withUnsafeBytes(of: UInt(0x0102_0304)) { Array($0) })
        #expect(seen[2].1 == Array("label".utf8))
        #expect(seen[3].1 == [])
    }
}
