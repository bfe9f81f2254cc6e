// What SignetBundle needs from the system beyond Glibc: zlib's CRC-32 (Debian: zlib1g-dev)
// and extended attributes.
#include <zlib.h>
#if defined(__linux__)
#include <sys/xattr.h>
#endif
