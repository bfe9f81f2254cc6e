import CPKCS11

/// What a module says about itself (`C_GetInfo`), for the URI's `library-…` attributes.
public struct PKCS11LibraryInfo: Sendable, Equatable {
    /// The module's manufacturer, without its space padding.
    public var manufacturer: String
    /// The module's description, without its space padding.
    public var libraryDescription: String
    /// The module's own version.
    public var version: PKCS11Version
    /// The Cryptoki version the module implements (2.40 for most).
    public var cryptokiVersion: PKCS11Version

    /// Information made of its parts.
    public init(manufacturer: String, libraryDescription: String, version: PKCS11Version, cryptokiVersion: PKCS11Version) {
        self.manufacturer = manufacturer
        self.libraryDescription = libraryDescription
        self.version = version
        self.cryptokiVersion = cryptokiVersion
    }

    init(_ info: CK_INFO) {
        self.init(
            manufacturer: PaddedText.decode(info.manufacturerID), libraryDescription: PaddedText.decode(info.libraryDescription),
            version: PKCS11Version(major: info.libraryVersion.major, minor: info.libraryVersion.minor),
            cryptokiVersion: PKCS11Version(major: info.cryptokiVersion.major, minor: info.cryptokiVersion.minor))
    }
}

/// A token as `C_GetTokenInfo` describes it: texts without their space padding, and the flags
/// that matter for logging in.
public struct PKCS11TokenInfo: Sendable, Equatable {
    /// The token's label (the URI's `token=`).
    public var label: String
    /// The token's manufacturer.
    public var manufacturer: String
    /// The token's model.
    public var model: String
    /// The token's serial number.
    public var serial: String
    /// The raw `CKF_…` token flags.
    public var flags: UInt

    /// Information made of its parts.
    public init(label: String, manufacturer: String, model: String, serial: String, flags: UInt) {
        self.label = label
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.flags = flags
    }

    init(_ info: CK_TOKEN_INFO) {
        self.init(
            label: PaddedText.decode(info.label), manufacturer: PaddedText.decode(info.manufacturerID),
            model: PaddedText.decode(info.model), serial: PaddedText.decode(info.serialNumber), flags: UInt(info.flags))
    }

    /// Some operations need the user to log in (`CKF_LOGIN_REQUIRED`).
    public var loginRequired: Bool { flags & UInt(CKF_LOGIN_REQUIRED) != 0 }
    /// The token has been initialised (`CKF_TOKEN_INITIALIZED`).
    public var isInitialized: Bool { flags & UInt(CKF_TOKEN_INITIALIZED) != 0 }
    /// The user PIN has been set (`CKF_USER_PIN_INITIALIZED`).
    public var userPINInitialized: Bool { flags & UInt(CKF_USER_PIN_INITIALIZED) != 0 }
    /// The user PIN is locked (`CKF_USER_PIN_LOCKED`).
    public var pinLocked: Bool { flags & UInt(CKF_USER_PIN_LOCKED) != 0 }
    /// A wrong PIN was entered since the last right one (`CKF_USER_PIN_COUNT_LOW`).
    public var pinCountLow: Bool { flags & UInt(CKF_USER_PIN_COUNT_LOW) != 0 }
    /// One more wrong PIN locks it (`CKF_USER_PIN_FINAL_TRY`).
    public var pinFinalTry: Bool { flags & UInt(CKF_USER_PIN_FINAL_TRY) != 0 }
    /// The PIN is entered on the device itself, not given by the application
    /// (`CKF_PROTECTED_AUTHENTICATION_PATH`).
    public var protectedAuthenticationPath: Bool { flags & UInt(CKF_PROTECTED_AUTHENTICATION_PATH) != 0 }
    /// The token refuses writes (`CKF_WRITE_PROTECTED`).
    public var isWriteProtected: Bool { flags & UInt(CKF_WRITE_PROTECTED) != 0 }
}

/// A slot as `C_GetSlotInfo` describes it, with the token in it.
public struct PKCS11SlotInfo: Sendable, Equatable {
    /// The slot's id (the URI's `slot-id=`).
    public var id: UInt
    /// The slot's description, without its space padding.
    public var slotDescription: String
    /// The slot's manufacturer, without its space padding.
    public var manufacturer: String
    /// The raw `CKF_…` slot flags.
    public var flags: UInt
    /// The token in the slot; nil when there is none, or the module cannot read it.
    public var token: PKCS11TokenInfo?

    /// Information made of its parts.
    public init(id: UInt, slotDescription: String, manufacturer: String, flags: UInt, token: PKCS11TokenInfo?) {
        self.id = id
        self.slotDescription = slotDescription
        self.manufacturer = manufacturer
        self.flags = flags
        self.token = token
    }

    /// The slot holds a token (`CKF_TOKEN_PRESENT`).
    public var tokenPresent: Bool { flags & UInt(CKF_TOKEN_PRESENT) != 0 }
    /// The token can be taken out (`CKF_REMOVABLE_DEVICE`).
    public var isRemovable: Bool { flags & UInt(CKF_REMOVABLE_DEVICE) != 0 }
    /// The slot is a hardware slot (`CKF_HW_SLOT`).
    public var isHardware: Bool { flags & UInt(CKF_HW_SLOT) != 0 }
}

/// The fixed-size, space-padded text fields of PKCS#11 structures.
enum PaddedText {
    /// The text of a C `unsigned char[N]` field (imported as a tuple): up to the first NUL,
    /// without trailing spaces, invalid UTF-8 repaired.
    static func decode<Field>(_ field: Field) -> String {
        withUnsafeBytes(of: field) { raw in
            var bytes = Array(raw)
            if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
            while bytes.last == UInt8(ascii: " ") { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
