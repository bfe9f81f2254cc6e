// OpenSSL's libcrypto (Debian: libssl-dev), for the two things swift-crypto does not provide:
// decrypting the legacy PKCS#12 ciphers (pbeWithSHAAnd3-KeyTripleDES-CBC, pbeWithSHAAnd40BitRC2-CBC,
// pbeWithSHAAnd128BitRC2-CBC; RC2 lives in OpenSSL 3's "legacy" provider), and the raw RSA
// public-key operation (RSAEP, RFC 8017 §5.1.1) on which SignetAge builds EME-OAEP with a label.
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
