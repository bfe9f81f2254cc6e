// The fake PKCS#11 module's C source (FakeModule.swift builds it).

extension FakeModule {
    /// The module's C source.
    static let source = #"""
/* A fake PKCS#11 module for Signet's tests (see FakeModule.swift); BEHAVIOUR, set when it is compiled, makes one call
   misbehave. Not thread-safe beyond what Signet needs: it calls a module under one lock. */
#include <string.h>
#include <p11-kit/pkcs11.h>

#ifndef BEHAVIOUR
#define BEHAVIOUR 0
#endif
/* The behaviours, numbered as FakeModule.Behaviour is. */
enum {
    NORMAL, WRONG_PIN, PIN_LOCKED, LOGIN_LOCKED, MECHANISM_INVALID, HUGE_SIGNATURE, OVERLONG_WRITE, SHORT_SIGNATURE,
    SLOT_COUNT_LIES, TOO_MANY_SLOTS, SLOT_LIST_OVERFLOW, ATTRIBUTE_LIES, ATTRIBUTE_OVERLONG, ENDLESS_SEARCH, STALE_SESSION,
    STRANGE_RETURN_CODE, INITIALIZE_FAILS, NO_FUNCTION_LIST_, NULL_FUNCTION_LIST, PROBED_SIGN
};
#define NO_FUNCTION_LIST 17 /* for the preprocessor */

#define EXPORT __attribute__((visibility("default")))

/* The calls counted, for tests that check that retries are bounded: fake_calls("C_Sign"). */
static const char *counted[] = {"C_GetSlotList", "C_OpenSession", "C_Login", "C_FindObjectsInit", "C_FindObjects", "C_Sign"};
static long counts[6];
static long *counter(const char *name) {
    for (int i = 0; i < 6; i++) if (strcmp(counted[i], name) == 0) return &counts[i];
    return NULL;
}
static void count(const char *name) { __atomic_fetch_add(counter(name), 1, __ATOMIC_SEQ_CST); }
EXPORT long fake_calls(const char *name) { return counter(name) ? __atomic_load_n(counter(name), __ATOMIC_SEQ_CST) : -1; }

/* PROBED_SIGN: C_Sign first calls the test's probe, on the calling thread (which the probe inspects). */
static void (*probe)(void);
EXPORT void fake_set_probe(void (*function)(void)) { __atomic_store_n(&probe, function, __ATOMIC_SEQ_CST); }

static int initialized, open_sessions, logged_in, signing, finding;
static CK_SESSION_HANDLE next_session = 1;
static CK_OBJECT_HANDLE found[64];
static CK_ULONG found_count, found_next;

/* The key pair. */
static CK_OBJECT_CLASS private_class = CKO_PRIVATE_KEY, public_class = CKO_PUBLIC_KEY;
static CK_KEY_TYPE ec_type = CKK_EC;
static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
static unsigned char label[] = {'k', 'e', 'y'};
static unsigned char key_id[] = {0x01};
static unsigned char ec_params[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
static unsigned char ec_point[] = {
    0x04, 0x41,
    0x04, 0x94, 0x14, 0xd2, 0x65, 0x8b, 0x4e, 0x6b, 0x8a, 0xb1, 0x35, 0xc6, 0xc0, 0x95, 0xe4, 0x1b, 0x8c, 0xf4, 0x85, 0x7c,
    0x0f, 0x57, 0x19, 0x15, 0x4a, 0x29, 0xac, 0x25, 0x7b, 0xfe, 0xb6, 0x8b, 0xf7, 0x83, 0x15, 0xc6, 0x0e, 0xc4, 0x02, 0x42,
    0x25, 0x59, 0x4e, 0x55, 0x21, 0x0e, 0x51, 0x2e, 0x95, 0xb2, 0xb2, 0x16, 0xdb, 0x71, 0xcf, 0xa6, 0x40, 0xba, 0xca, 0xf4,
    0x02, 0xf5, 0xe8, 0x40, 0x32};

static CK_ATTRIBUTE private_key[] = {
    {CKA_CLASS, &private_class, sizeof private_class}, {CKA_KEY_TYPE, &ec_type, sizeof ec_type},
    {CKA_TOKEN, &yes, 1}, {CKA_PRIVATE, &yes, 1}, {CKA_SIGN, &yes, 1}, {CKA_ALWAYS_AUTHENTICATE, &no, 1},
    {CKA_LABEL, label, sizeof label}, {CKA_ID, key_id, sizeof key_id}, {CKA_EC_PARAMS, ec_params, sizeof ec_params},
};
static CK_ATTRIBUTE public_key[] = {
    {CKA_CLASS, &public_class, sizeof public_class}, {CKA_KEY_TYPE, &ec_type, sizeof ec_type},
    {CKA_TOKEN, &yes, 1}, {CKA_PRIVATE, &no, 1}, {CKA_VERIFY, &yes, 1},
    {CKA_LABEL, label, sizeof label}, {CKA_ID, key_id, sizeof key_id}, {CKA_EC_PARAMS, ec_params, sizeof ec_params},
    {CKA_EC_POINT, ec_point, sizeof ec_point},
};
#define COUNT(array) (sizeof array / sizeof array[0])

/* The object's attributes; NULL for an object out of view. */
static CK_ATTRIBUTE *object(CK_OBJECT_HANDLE handle, CK_ULONG *n) {
    if (handle == 1 && logged_in) { *n = COUNT(private_key); return private_key; }
    if (handle == 2) { *n = COUNT(public_key); return public_key; }
    return NULL;
}

static void pad(unsigned char *field, size_t size, const char *text) { memset(field, ' ', size), memcpy(field, text, strlen(text)); }
static CK_RV not_supported(void) { return CKR_FUNCTION_NOT_SUPPORTED; }
static CK_RV mechanism_invalid(void) { return CKR_MECHANISM_INVALID; } /* C_GenerateKeyPair: the fake token makes no keys */

static CK_RV fake_Initialize(void *args) {
    (void)args;
    if (BEHAVIOUR == INITIALIZE_FAILS || initialized) return initialized ? CKR_CRYPTOKI_ALREADY_INITIALIZED : CKR_GENERAL_ERROR;
    initialized = 1;
    return CKR_OK;
}

static CK_RV fake_Finalize(void *reserved) {
    if (reserved || !initialized) return reserved ? CKR_ARGUMENTS_BAD : CKR_CRYPTOKI_NOT_INITIALIZED;
    initialized = open_sessions = logged_in = signing = finding = 0;
    return CKR_OK;
}

static CK_RV fake_GetInfo(CK_INFO *info) {
    if (!info) return CKR_ARGUMENTS_BAD;
    memset(info, 0, sizeof *info);
    info->cryptokiVersion.major = 2, info->cryptokiVersion.minor = 40, info->libraryVersion.major = 1;
    pad(info->manufacturerID, sizeof info->manufacturerID, "Signet tests");
    pad(info->libraryDescription, sizeof info->libraryDescription, "fake PKCS#11 module");
    return CKR_OK;
}

static CK_RV fake_GetSlotList(CK_BBOOL present, CK_SLOT_ID *list, CK_ULONG *n) {
    (void)present;
    count("C_GetSlotList");
    if (!initialized) return CKR_CRYPTOKI_NOT_INITIALIZED;
    if (!n) return CKR_ARGUMENTS_BAD;
    if (BEHAVIOUR == TOO_MANY_SLOTS) { *n = 1UL << 20; return CKR_OK; }
    if (BEHAVIOUR == SLOT_COUNT_LIES) return *n = 5, list ? CKR_BUFFER_TOO_SMALL : CKR_OK; /* never room enough */
    if (!list) { *n = 1; return CKR_OK; }
    if (*n < 1) { *n = 1; return CKR_BUFFER_TOO_SMALL; }
    list[0] = 1;
    *n = BEHAVIOUR == SLOT_LIST_OVERFLOW ? 2 : 1;  /* claims a second slot it did not write */
    return CKR_OK;
}

static CK_RV fake_GetSlotInfo(CK_SLOT_ID slot, CK_SLOT_INFO *info) {
    if (slot != 1) return CKR_SLOT_ID_INVALID;
    if (!info) return CKR_ARGUMENTS_BAD;
    memset(info, 0, sizeof *info);
    pad(info->slotDescription, sizeof info->slotDescription, "fake slot");
    pad(info->manufacturerID, sizeof info->manufacturerID, "Signet tests");
    info->flags = CKF_TOKEN_PRESENT;
    return CKR_OK;
}

static CK_RV fake_GetTokenInfo(CK_SLOT_ID slot, CK_TOKEN_INFO *info) {
    if (slot != 1) return CKR_SLOT_ID_INVALID;
    if (!info) return CKR_ARGUMENTS_BAD;
    memset(info, 0, sizeof *info);
    pad(info->label, sizeof info->label, "fake"), pad(info->manufacturerID, sizeof info->manufacturerID, "Signet tests");
    pad(info->model, sizeof info->model, "fake"), pad(info->serialNumber, sizeof info->serialNumber, "0001");
    info->flags = CKF_TOKEN_INITIALIZED | CKF_LOGIN_REQUIRED | CKF_USER_PIN_INITIALIZED;
    if (BEHAVIOUR == PIN_LOCKED) info->flags |= CKF_USER_PIN_LOCKED;
    info->ulMaxSessionCount = info->ulMaxRwSessionCount = CK_EFFECTIVELY_INFINITE;
    info->ulMaxPinLen = 64, info->ulMinPinLen = 4;
    return CKR_OK;
}

static CK_RV fake_OpenSession(CK_SLOT_ID slot, CK_FLAGS flags, void *application, CK_NOTIFY notify, CK_SESSION_HANDLE *session) {
    (void)application; (void)notify;
    count("C_OpenSession");
    if (BEHAVIOUR == STRANGE_RETURN_CODE) return CKR_VENDOR_DEFINED | 1;
    if (slot != 1) return CKR_SLOT_ID_INVALID;
    if (!(flags & CKF_SERIAL_SESSION)) return CKR_SESSION_PARALLEL_NOT_SUPPORTED;
    if (!session) return CKR_ARGUMENTS_BAD;
    *session = next_session++;
    open_sessions++;
    return CKR_OK;
}

static CK_RV fake_CloseSession(CK_SESSION_HANDLE session) {
    if (open_sessions > 0 && --open_sessions == 0) logged_in = 0; /* closing the last session logs out */
    return session ? CKR_OK : CKR_SESSION_HANDLE_INVALID;
}

static CK_RV fake_Login(CK_SESSION_HANDLE session, CK_USER_TYPE user, unsigned char *pin, CK_ULONG length) {
    (void)session;
    count("C_Login");
    if (user != CKU_USER) return CKR_USER_TYPE_INVALID;
    if (BEHAVIOUR == PIN_LOCKED || BEHAVIOUR == LOGIN_LOCKED) return CKR_PIN_LOCKED;
    if (logged_in) return CKR_USER_ALREADY_LOGGED_IN;
    if (!pin || length != 4 || memcmp(pin, "1234", 4) != 0) return CKR_PIN_INCORRECT;
    logged_in = 1;
    return CKR_OK;
}

/* Whether the object has every attribute of the template, with the same value. */
static int matches(CK_OBJECT_HANDLE handle, CK_ATTRIBUTE *template, CK_ULONG n) {
    CK_ULONG size;
    CK_ATTRIBUTE *attributes = object(handle, &size);
    if (!attributes) return 0;
    for (CK_ULONG i = 0; i < n; i++) {
        int ok = 0;
        for (CK_ULONG j = 0; j < size; j++)
            if (attributes[j].type == template[i].type && attributes[j].ulValueLen == template[i].ulValueLen &&
                (template[i].ulValueLen == 0 || memcmp(attributes[j].pValue, template[i].pValue, template[i].ulValueLen) == 0))
                ok = 1;
        if (!ok) return 0;
    }
    return 1;
}

static CK_RV fake_FindObjectsInit(CK_SESSION_HANDLE session, CK_ATTRIBUTE *template, CK_ULONG n) {
    (void)session;
    count("C_FindObjectsInit");
    if (BEHAVIOUR == STALE_SESSION) return CKR_SESSION_HANDLE_INVALID;
    if (finding) return CKR_OPERATION_ACTIVE;
    if (n && !template) return CKR_ARGUMENTS_BAD;
    found_count = found_next = 0;
    for (CK_OBJECT_HANDLE handle = 1; handle <= 2; handle++)
        if (matches(handle, template, n)) found[found_count++] = handle;
    finding = 1;
    return CKR_OK;
}

static CK_RV fake_FindObjects(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE *handles, CK_ULONG room, CK_ULONG *n) {
    (void)session;
    count("C_FindObjects");
    if (!finding) return CKR_OPERATION_NOT_INITIALIZED;
    if (!handles || !n) return CKR_ARGUMENTS_BAD;
    if (BEHAVIOUR == ENDLESS_SEARCH) {
        for (*n = 0; *n < room; (*n)++) handles[*n] = 2; /* always a full batch, never the end of the search */
        return CKR_OK;
    }
    *n = 0;
    while (found_next < found_count && *n < room) handles[(*n)++] = found[found_next++];
    return CKR_OK;
}

static CK_RV fake_FindObjectsFinal(CK_SESSION_HANDLE session) {
    (void)session;
    return finding ? (finding = 0, CKR_OK) : CKR_OPERATION_NOT_INITIALIZED;
}

static CK_RV fake_GetAttributeValue(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE handle, CK_ATTRIBUTE *template, CK_ULONG n) {
    (void)session;
    CK_ULONG size;
    CK_ATTRIBUTE *attributes = object(handle, &size);
    if (!attributes) return CKR_OBJECT_HANDLE_INVALID;
    if (n && !template) return CKR_ARGUMENTS_BAD;
    CK_RV rv = CKR_OK;
    for (CK_ULONG i = 0; i < n; i++) {
        CK_ATTRIBUTE *wanted = &template[i], *have = NULL;
        for (CK_ULONG j = 0; j < size; j++)
            if (attributes[j].type == wanted->type) have = &attributes[j];
        if (!have) {
            wanted->ulValueLen = CK_UNAVAILABLE_INFORMATION;
            rv = CKR_ATTRIBUTE_TYPE_INVALID;
        } else if (!wanted->pValue) {
            /* 0xFFFFFFFF: a 32-bit "-1", which on a 64-bit CK_ULONG is a length of 4 GiB. */
            wanted->ulValueLen = BEHAVIOUR == ATTRIBUTE_LIES && have->type == CKA_EC_POINT ? 0xFFFFFFFFUL : have->ulValueLen;
        } else if (wanted->ulValueLen < have->ulValueLen) {
            wanted->ulValueLen = CK_UNAVAILABLE_INFORMATION;
            rv = CKR_BUFFER_TOO_SMALL;
        } else {
            memcpy(wanted->pValue, have->pValue, have->ulValueLen);
            /* Claims 100 bytes more than the buffer it was given (and wrote none of them). */
            int lie = BEHAVIOUR == ATTRIBUTE_OVERLONG && have->type == CKA_EC_POINT;
            wanted->ulValueLen = lie ? wanted->ulValueLen + 100 : have->ulValueLen;
        }
    }
    return rv;
}

static CK_RV fake_SignInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key) {
    (void)session;
    if (!mechanism) return CKR_ARGUMENTS_BAD;
    if (BEHAVIOUR == MECHANISM_INVALID) return CKR_MECHANISM_INVALID;
    if (!logged_in) return CKR_USER_NOT_LOGGED_IN;
    if (key != 1) return CKR_KEY_HANDLE_INVALID;
    if (mechanism->mechanism != CKM_ECDSA) return CKR_MECHANISM_INVALID;
    signing = 1;  /* a second C_SignInit simply starts over */
    return CKR_OK;
}

static CK_RV fake_Sign(CK_SESSION_HANDLE session, unsigned char *data, CK_ULONG length, unsigned char *signature,
    CK_ULONG *signature_length) {
    (void)session; (void)data;
    count("C_Sign");
    if (!signing) return CKR_OPERATION_NOT_INITIALIZED;
    if (!signature_length) { signing = 0; return CKR_ARGUMENTS_BAD; }
    if (length != 32 && length != 48 && length != 64) { signing = 0; return CKR_DATA_LEN_RANGE; }
    if (BEHAVIOUR == HUGE_SIGNATURE) { *signature_length = 1UL << 20; return CKR_BUFFER_TOO_SMALL; }
    if (!signature) { *signature_length = 64; return CKR_OK; }
    if (BEHAVIOUR == OVERLONG_WRITE) {
        /* Fills the buffer it got and claims 64 bytes more. */
        memset(signature, 0x01, *signature_length);
        *signature_length += 64;
        signing = 0;
        return CKR_OK;
    }
    if (BEHAVIOUR == PROBED_SIGN) {
        void (*function)(void) = __atomic_load_n(&probe, __ATOMIC_SEQ_CST);
        if (function) function();
    }
    CK_ULONG made = BEHAVIOUR == SHORT_SIGNATURE ? 10 : 64;
    if (*signature_length < made) { *signature_length = made; return CKR_BUFFER_TOO_SMALL; }
    /* r = s = 0x0101...01: not a signature of anything, but both in range. */
    memset(signature, 0x01, made);
    *signature_length = made;
    signing = 0;
    return CKR_OK;
}

/* Through void (*)(void), the generic function pointer type: every ABI Signet runs on ignores extra arguments. */
#define STUB(name) .name = (CK_##name)(void (*)(void))not_supported
static CK_FUNCTION_LIST functions __attribute__((unused)) = {
    .version = {2, 40},
    .C_Initialize = fake_Initialize, .C_Finalize = fake_Finalize, .C_GetInfo = fake_GetInfo,
#if BEHAVIOUR != NO_FUNCTION_LIST
    .C_GetFunctionList = C_GetFunctionList,
#endif
    .C_GetSlotList = fake_GetSlotList, .C_GetSlotInfo = fake_GetSlotInfo, .C_GetTokenInfo = fake_GetTokenInfo,
    STUB(C_GetMechanismList), STUB(C_GetMechanismInfo), STUB(C_InitToken), STUB(C_InitPIN), STUB(C_SetPIN),
    .C_OpenSession = fake_OpenSession, .C_CloseSession = fake_CloseSession, STUB(C_CloseAllSessions), STUB(C_GetSessionInfo),
    STUB(C_GetOperationState), STUB(C_SetOperationState), .C_Login = fake_Login, STUB(C_Logout),
    STUB(C_CreateObject), STUB(C_CopyObject), STUB(C_DestroyObject), STUB(C_GetObjectSize),
    .C_GetAttributeValue = fake_GetAttributeValue, STUB(C_SetAttributeValue),
    .C_FindObjectsInit = fake_FindObjectsInit, .C_FindObjects = fake_FindObjects, .C_FindObjectsFinal = fake_FindObjectsFinal,
    STUB(C_EncryptInit), STUB(C_Encrypt), STUB(C_EncryptUpdate), STUB(C_EncryptFinal),
    STUB(C_DecryptInit), STUB(C_Decrypt), STUB(C_DecryptUpdate), STUB(C_DecryptFinal),
    STUB(C_DigestInit), STUB(C_Digest), STUB(C_DigestUpdate), STUB(C_DigestKey), STUB(C_DigestFinal),
    .C_SignInit = fake_SignInit, .C_Sign = fake_Sign, STUB(C_SignUpdate), STUB(C_SignFinal), STUB(C_SignRecoverInit), STUB(C_SignRecover),
    STUB(C_VerifyInit), STUB(C_Verify), STUB(C_VerifyUpdate), STUB(C_VerifyFinal), STUB(C_VerifyRecoverInit), STUB(C_VerifyRecover),
    STUB(C_DigestEncryptUpdate), STUB(C_DecryptDigestUpdate), STUB(C_SignEncryptUpdate), STUB(C_DecryptVerifyUpdate),
    STUB(C_GenerateKey), .C_GenerateKeyPair = (CK_C_GenerateKeyPair)(void (*)(void))mechanism_invalid,
    STUB(C_WrapKey), STUB(C_UnwrapKey), STUB(C_DeriveKey),
    STUB(C_SeedRandom), STUB(C_GenerateRandom), STUB(C_GetFunctionStatus), STUB(C_CancelFunction), STUB(C_WaitForSlotEvent),
};

#if BEHAVIOUR != NO_FUNCTION_LIST
EXPORT CK_RV C_GetFunctionList(CK_FUNCTION_LIST **list) {
    if (!list) return CKR_ARGUMENTS_BAD;
    *list = BEHAVIOUR == NULL_FUNCTION_LIST ? NULL : &functions;
    return CKR_OK;
}
#endif
"""#
}
