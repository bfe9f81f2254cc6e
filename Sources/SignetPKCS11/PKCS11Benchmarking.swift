import CPKCS11
import SignetCore

extension PKCS11Module {
    /// The baseline Scripts/bench compares ``PKCS11Signer`` with: `count` signatures of `data`
    /// made by nothing but `C_SignInit` and one `C_Sign` into a buffer of the largest size, on
    /// one session opened (and logged in) once — what a hand-written C loop does. Returns the
    /// last signature. Not API: for the benchmark helper only.
    @_spi(Benchmarking)
    public func rawSignLoop(
        _ data: [UInt8], with key: PKCS11KeyObject, mechanism: PKCS11SignMechanism, pin: any PKCS11PINProvider, count: Int
    ) throws -> [UInt8] {
        guard let privateHandle = key.privateKeyHandle else {
            throw PKCS11Error.unsupportedKey(uri: key.uri.description, detail: "only its public key is in view")
        }
        return try locked { (table: inout SessionTable) throws -> [UInt8] in
            let slot = try slotInfo(CK_SLOT_ID(key.slotID))
            return try withSession(slot, login: true, pin: pin, table: &table) { (session: CK_SESSION_HANDLE) throws -> [UInt8] in
                guard let signInit = functions.pointee.C_SignInit, let signCall = functions.pointee.C_Sign else {
                    throw PKCS11Error.missing("C_Sign")
                }
                var input = data
                var signature = [UInt8](repeating: 0, count: Int(Self.maximumSignatureLength))
                var written: CK_ULONG = 0
                for _ in 0..<count {
                    let started: CK_RV = try mechanism.withMechanism(token: key.token.label) { signInit(session, $0, CK_OBJECT_HANDLE(privateHandle)) }
                    guard started == CKR_OK else { throw PKCS11Error.failed("C_SignInit", started) }
                    written = Self.maximumSignatureLength
                    let signed: CK_RV = input.withUnsafeMutableBufferPointer { inputBuffer in
                        signature.withUnsafeMutableBufferPointer { outputBuffer in
                            signCall(session, inputBuffer.baseAddress, CK_ULONG(inputBuffer.count), outputBuffer.baseAddress, &written)
                        }
                    }
                    guard signed == CKR_OK else { throw PKCS11Error.failed("C_Sign", signed) }
                }
                return Array(signature.prefix(Int(written)))
            }
        }
    }
}
