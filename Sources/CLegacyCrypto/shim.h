// OpenSSL's libcrypto (Debian: libssl-dev), used only to decrypt the legacy PKCS#12 ciphers
// (pbeWithSHAAnd3-KeyTripleDES-CBC, pbeWithSHAAnd40BitRC2-CBC, pbeWithSHAAnd128BitRC2-CBC)
// that swift-crypto does not provide. RC2 lives in OpenSSL 3's "legacy" provider.
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/err.h>
