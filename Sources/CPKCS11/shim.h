// PKCS#11 (Cryptoki 2.40) as p11-kit ships it (Debian: libp11-kit-dev), and the dynamic loader,
// for SignetPKCS11. Modules are loaded with dlopen and called only through the function list
// C_GetFunctionList returns, so nothing here links against a PKCS#11 library.
//
// p11-kit's header needs no macro defined before it: it defines CK_PTR and friends itself and,
// without CRYPTOKI_GNU, exposes the standard names (CK_ATTRIBUTE with pValue and ulValueLen …).
#include <dlfcn.h>
#include <p11-kit-1/p11-kit/pkcs11.h>
