#!/usr/bin/env python3
"""Writes the seed corpora of Fuzz/corpus/<target>/ (see Fuzz/README.md).

Keys come from the test fixtures in Tests/SignetCoreTests/Vectors/keys, converted with
openssl and python's `cryptography`; minisign files from Tests/SignetCoreTests/Vectors/minisign.json
(made by minisign 0.11) plus small-cost ones made here; HTTP values from RFC 9421/9530 as
Tests/SignetHTTPTests/Vectors holds them; bundles are zips written the way ZipWriter writes
them, signed with the fuzz trust key (Ed25519 from SHA-256("signet fuzz bundle key"), which
protects nothing; BundleTargets.trustedKeySPKI is its public key). CBOR items come from RFC
8949 Appendix A (Tests/SignetCoreTests/Vectors/cbor/appendix_a.json), COSE keys from
Tests/SignetCoreTests/Vectors/cbor/cose-keys.json and the key fixtures, App Attest objects,
assertions and authenticator data from the genuine samples in
Tests/SignetAttestationTests/Vectors/apple.

Run from anywhere: python3 Fuzz/make-seeds.py. It overwrites the files it writes and leaves
others alone; encrypted seeds get new salts on each run. Needs openssl and `cryptography`.
"""

import base64
import hashlib
import json
import os
import struct
import subprocess
import sys
import zlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Fuzz", "corpus")
KEYS = os.path.join(ROOT, "Tests", "SignetCoreTests", "Vectors", "keys")
PASS = "signet-test"
MAX_SEED = 8 * 1024


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    assert len(data) < MAX_SEED, (target, name, len(data))
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def fixture(name):
    with open(os.path.join(KEYS, name), "rb") as f:
        return f.read()


def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], input=stdin, check=True, capture_output=True).stdout


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64(data):
    return base64.b64encode(data).decode()


def unsigned(number, length=None):
    length = length or max(1, (number.bit_length() + 7) // 8)
    return number.to_bytes(length, "big")


# MARK: Keys

def load(name):
    return serialization.load_pem_private_key(fixture(name), password=None)


def keys():
    pems = {n: fixture(n + ".pem") for n in ["rsa2048", "rsa1024", "p256", "p384", "ed25519"]}
    private = {n: load(n + ".pem") for n in pems}

    # PEM: every label KeyDecoder reads, and some it refuses.
    for name, pem in pems.items():
        write("key-pem", f"pkcs8-{name}.pem", pem)
        write("key-pem", f"spki-{name}.pem", openssl("pkey", "-in", os.path.join(KEYS, name + ".pem"), "-pubout"))
    write("key-pem", "pkcs1-rsa2048.pem", openssl("rsa", "-in", os.path.join(KEYS, "rsa2048.pem"), "-traditional"))
    write("key-pem", "pkcs1-public-rsa2048.pem", openssl("rsa", "-in", os.path.join(KEYS, "rsa2048.pem"), "-RSAPublicKey_out"))
    write("key-pem", "sec1-p256.pem", openssl("ec", "-in", os.path.join(KEYS, "p256.pem")))
    write("key-pem", "sec1-p384.pem", openssl("ec", "-in", os.path.join(KEYS, "p384.pem")))
    write("key-pem", "sec1-compressed.pem", fixture("p256-sec1-compressed.pem"))
    write("key-pem", "ec-parameters-then-key.pem", fixture("p256-ecparam.pem"))
    write("key-pem", "encrypted-ed25519.pem", fixture("ed25519-pbes2-aes128-sha1.pem"))
    write("key-pem", "legacy-proc-type.pem", fixture("p256-legacy-encrypted.pem"))
    write("key-pem", "certificate.pem", fixture("cert.pem"))
    write("key-pem", "openssh-private.pem", fixture("openssh-ed25519.key"))
    write("key-pem", "crlf-p256.pem", pems["p256"].replace(b"\n", b"\r\n"))
    write("key-pem", "two-keys.pem", pems["p256"] + pems["ed25519"])
    write("key-pem", "text-around.pem", b"a key:\n" + pems["ed25519"] + b"that was it\n")
    write("key-pem", "no-end.pem", pems["p256"].split(b"-----END")[0])
    write("key-pem", "end-mismatch.pem", pems["p256"].replace(b"END PRIVATE KEY", b"END PUBLIC KEY"))

    # DER of every structure the DER decoder tells apart.
    ders = {}
    for name in pems:
        path = os.path.join(KEYS, name + ".pem")
        ders[f"pkcs8-{name}"] = openssl("pkey", "-in", path, "-outform", "DER")
        ders[f"spki-{name}"] = openssl("pkey", "-in", path, "-pubout", "-outform", "DER")
    rsa_path = os.path.join(KEYS, "rsa2048.pem")
    ders["pkcs1-rsa2048"] = openssl("rsa", "-in", rsa_path, "-traditional", "-outform", "DER")
    ders["pkcs1-public-rsa2048"] = openssl("rsa", "-in", rsa_path, "-RSAPublicKey_out", "-outform", "DER")
    ders["pkcs1-rsa1024"] = openssl("rsa", "-in", os.path.join(KEYS, "rsa1024.pem"), "-traditional", "-outform", "DER")
    for curve in ["p256", "p384"]:
        path = os.path.join(KEYS, curve + ".pem")
        ders[f"sec1-{curve}"] = openssl("ec", "-in", path, "-outform", "DER")
    p256 = os.path.join(KEYS, "p256.pem")
    ders["sec1-p256-no-public"] = openssl("ec", "-in", p256, "-no_public", "-outform", "DER")
    ders["sec1-p256-compressed"] = openssl("ec", "-in", p256, "-conv_form", "compressed", "-outform", "DER")
    ders["sec1-p256-explicit-curve"] = openssl("ec", "-in", p256, "-param_enc", "explicit", "-outform", "DER")
    ders["spki-p256-compressed"] = openssl("ec", "-in", p256, "-pubout", "-conv_form", "compressed", "-outform", "DER")
    ders["spki-x25519"] = openssl("pkey", "-pubin", "-in", os.path.join(KEYS, "x25519-pub.pem"), "-outform", "DER")
    ders["spki-secp256k1"] = openssl("pkey", "-pubin", "-in", os.path.join(KEYS, "secp256k1-pub.pem"), "-outform", "DER")
    ders["certificate"] = fixture("cert.der")
    for name, der in ders.items():
        write("key-der", name + ".der", der)
        write("key-auto", name + ".der", der)
    for name in ["pkcs1-rsa2048", "pkcs1-public-rsa2048", "pkcs1-rsa1024"]:
        write("key-pkcs1", name + ".der", ders[name])
    write("key-pkcs1", "pkcs1-rsa512-refused.der", openssl("rsa", "-in", os.path.join(KEYS, "rsa512-pkcs1.pem"), "-outform", "DER"))
    for name in pems:
        write("key-pkcs8", f"pkcs8-{name}.der", ders[f"pkcs8-{name}"])
        write("key-spki", f"spki-{name}.der", ders[f"spki-{name}"])
    write("key-pkcs8", "pkcs8-secp256k1-unsupported.der", openssl("pkey", "-in", os.path.join(KEYS, "secp256k1.pem"), "-outform", "DER"))
    for name in ["spki-p256-compressed", "spki-x25519", "spki-secp256k1"]:
        write("key-spki", name + ".der", ders[name])
    for name in ["sec1-p256", "sec1-p384", "sec1-p256-no-public", "sec1-p256-compressed", "sec1-p256-explicit-curve"]:
        write("key-sec1", name + ".der", ders[name])

    # Encrypted PKCS#8 under the passphrase the targets try.
    for name, cipher, prf, extra in [
        ("p256", "aes-256-cbc", "hmacWithSHA256", []),
        ("ed25519", "aes-128-cbc", "hmacWithSHA1", []),
        ("p384", "aes-192-cbc", "hmacWithSHA512", []),
        ("rsa2048", "aes-256-cbc", "hmacWithSHA384", []),
        ("p256", "aes-256-cbc", "hmacWithSHA256", ["-iter", "1"]),
    ]:
        path = os.path.join(KEYS, name + ".pem")
        suffix = "-iter1" if extra else ""
        der = openssl("pkcs8", "-topk8", "-in", path, "-v2", cipher, "-v2prf", prf, *extra, "-passout", "pass:" + PASS, "-outform", "DER")
        write("key-pkcs8-encrypted", f"{name}-{cipher}-{prf}{suffix}.der", der)
        write("key-auto", f"encrypted-{name}-{cipher}{suffix}.der", der)
    write("key-pkcs8-encrypted", "p256-pem-aes256.pem",
          openssl("pkcs8", "-topk8", "-in", p256, "-v2", "aes-256-cbc", "-passout", "pass:" + PASS))
    write("key-pkcs8-encrypted", "p384-aes192-sha512-fixture.der", fixture("p384-pbes2-aes192-sha512.der"))
    write("key-pkcs8-encrypted", "pbes1-3des-refused.pem", fixture("p256-pbes1-3des.pem"))
    write("key-pkcs8-encrypted", "scrypt-refused.pem", fixture("p256-scrypt.pem"))
    write("key-pkcs8-encrypted", "other-passphrase.pem", fixture("p256-pbes2-aes256-sha256.pem"))

    # OpenSSH public key lines.
    for name, key in private.items():
        line = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        write("key-openssh", f"{name}.pub", line + b" fuzz@signet\n")
        write("key-auto", f"{name}.openssh.pub", line + b"\n")
    write("key-openssh", "fixture-ed25519.pub", fixture("openssh-ed25519.pub"))
    write("key-openssh", "fixture-p384.pub", fixture("p384.openssh.pub"))
    write("key-openssh", "type-mismatch.pub", b"ssh-rsa " + fixture("openssh-ed25519.pub").split(b" ")[1] + b"\n")
    write("key-openssh", "dss-unsupported.pub", b"ssh-dss AAAAB3NzaC1kc3MAAACBAP8= x\n")

    # OpenSSH private keys (openssh-key-v1): ssh-keygen's, and damaged copies of the Ed25519 one.
    for name in ["openssh-ed25519", "openssh-rsa", "openssh-ecdsa-p256", "openssh-ecdsa-p384", "openssh-rsa1024",
                 "openssh-ed25519-encrypted"]:
        write("key-openssh-private", name + ".key", fixture(name + ".key"))

    def ssh_string(data):
        return struct.pack(">I", len(data)) + data

    def ssh_fields(data, count):
        fields, at = [], 0
        for _ in range(count):
            length = struct.unpack(">I", data[at:at + 4])[0]
            fields.append(data[at + 4:at + 4 + length])
            at += 4 + length
        return fields, data[at:]

    def openssh_parts(name):
        """The public key blob and the private section of an openssh-key-v1 fixture."""
        body = base64.b64decode(b"".join(fixture(name).splitlines()[1:-1]))
        _, rest = ssh_fields(body[15:], 3)  # cipher, KDF, KDF options; then the number of keys
        (public, section), _ = ssh_fields(rest[4:], 2)
        return public, section

    def openssh_private(public, section, count=1, kdf=b"none", extra=b""):
        body = b"openssh-key-v1\0" + ssh_string(b"none") + ssh_string(kdf) + ssh_string(b"") + struct.pack(">I", count)
        body += ssh_string(public) * count + ssh_string(section) + extra
        text = base64.b64encode(body).decode()
        lines = [text[i:i + 70] for i in range(0, len(text), 70)]
        return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----\n"

    public, section = openssh_parts("openssh-ed25519.key")
    other_public, _ = openssh_parts("openssh-ed25519-encrypted.key")  # the public blob is in the clear
    dss_public = ssh_string(b"ssh-dss") + b"".join(ssh_string(bytes([n])) for n in [1, 2, 3, 4])
    for name, text in [
        ("check-integers-differ.key", openssh_private(public, section[:4] + bytes(4) + section[8:])),
        ("two-keys.key", openssh_private(public, section, count=2)),
        ("extra-data.key", openssh_private(public, section, extra=bytes(8))),
        ("bad-padding.key", openssh_private(public, section[:-1] + b"\x07")),
        ("halves-differ.key", openssh_private(other_public, section)),
        ("kdf-without-cipher.key", openssh_private(public, section, kdf=b"bcrypt")),
        ("truncated-section.key", openssh_private(public, section[:len(section) // 2])),
        ("dss-unsupported.key", openssh_private(dss_public, bytes(8) + dss_public + ssh_string(b"x") + b"\x01\x02\x03\x04")),
    ]:
        write("key-openssh-private", name, text)

    # JWKs, public and private.
    def jwk(key, private_too):
        if isinstance(key, rsa.RSAPrivateKey):
            numbers = key.private_numbers()
            pub = numbers.public_numbers
            doc = {"kty": "RSA", "n": b64url(unsigned(pub.n)), "e": b64url(unsigned(pub.e))}
            if private_too:
                doc.update(d=b64url(unsigned(numbers.d)), p=b64url(unsigned(numbers.p)), q=b64url(unsigned(numbers.q)),
                           dp=b64url(unsigned(numbers.dmp1)), dq=b64url(unsigned(numbers.dmq1)), qi=b64url(unsigned(numbers.iqmp)))
        elif isinstance(key, ec.EllipticCurvePrivateKey):
            size = (key.curve.key_size + 7) // 8
            pub = key.public_key().public_numbers()
            doc = {"kty": "EC", "crv": "P-256" if size == 32 else "P-384",
                   "x": b64url(unsigned(pub.x, size)), "y": b64url(unsigned(pub.y, size))}
            if private_too:
                doc["d"] = b64url(unsigned(key.private_numbers().private_value, size))
        else:
            raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            doc = {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}
            if private_too:
                doc["d"] = b64url(key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()))
        return json.dumps(doc, sort_keys=True) + "\n"

    for name, key in private.items():
        write("key-jwk", f"public-{name}.jwk", jwk(key, False))
        write("key-jwk", f"private-{name}.jwk", jwk(key, True))
    write("key-auto", "private-p256.jwk", jwk(private["p256"], True))
    write("key-auto", "public-rsa2048.jwk", jwk(private["rsa2048"], False))
    write("key-jwk", "unknown-kty.jwk", '{"kty":"oct","k":"AAAA"}\n')
    write("key-jwk", "ed25519-wrong-d.jwk", jwk(private["ed25519"], True).replace('"d": "', '"d": "A'))
    write("key-jwk", "not-json.jwk", '{"kty":"EC","crv":"P-256","x":\n')

    # iOS SecKeyCopyExternalRepresentation forms, base64 and raw.
    def ios_public(key):
        if isinstance(key, rsa.RSAPrivateKey):
            return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
        if isinstance(key, ec.EllipticCurvePrivateKey):
            return key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    for name, key in private.items():
        write("key-ios", f"public-{name}.b64", b64(ios_public(key)) + "\n")
        if isinstance(key, ec.EllipticCurvePrivateKey):
            size = (key.curve.key_size + 7) // 8
            raw = ios_public(key) + unsigned(key.private_numbers().private_value, size)
            write("key-ios", f"private-{name}.b64", b64(raw) + "\n")
            write("key-ios", f"public-{name}.raw", ios_public(key))
            write("key-auto", f"ios-private-{name}.b64", b64(raw) + "\n")
        if isinstance(key, rsa.RSAPrivateKey) and name == "rsa2048":
            der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption())
            write("key-ios", f"private-{name}.b64", b64(der) + "\n")
    write("key-auto", "ios-public-ed25519.b64", b64(ios_public(private["ed25519"])) + "\n")

    # The auto-detecting decoder gets a bit of everything.
    for name, pem in pems.items():
        write("key-auto", f"pkcs8-{name}.pem", pem)
    write("key-auto", "encrypted-ed25519.pem", fixture("ed25519-pbes2-aes128-sha1.pem"))
    write("key-auto", "unsupported-p521.pem", fixture("p521.pem"))
    write("key-auto", "unsupported-rsa-pss.pem", fixture("rsa-pss.pem"))
    write("key-auto", "not-a-key.txt", "hello, world\n")


# MARK: Minisign

def minisign():
    with open(os.path.join(ROOT, "Tests", "SignetCoreTests", "Vectors", "minisign.json")) as f:
        fx = json.load(f)
    write("minisign-pubkey", "fixture.pub", fx["publicKey"])
    write("minisign-pubkey", "fixture-encrypted-key.pub", fx["encryptedPublicKey"])
    write("minisign-pubkey", "key-line-only.txt", fx["publicKey"].split("\n")[1])
    write("minisign-pubkey", "crlf.pub", fx["publicKey"].replace("\n", "\r\n"))
    write("minisign-pubkey", "no-final-newline.pub", fx["publicKey"].rstrip("\n"))
    write("minisign-seckey", "fixture-unencrypted.key", fx["secretKey"])
    write("minisign-seckey", "fixture-encrypted-1gib.key", fx["encryptedSecretKey"])
    for key in ["prehashedSignature", "legacySignature", "encryptedKeySignature"]:
        write("minisign-sig", f"fixture-{key}.minisig", fx[key])
    write("minisign-sig", "crlf.minisig", fx["prehashedSignature"].replace("\n", "\r\n"))
    write("minisign-sig", "three-lines.minisig", "\n".join(fx["prehashedSignature"].split("\n")[:3]) + "\n")

    # A key pair made here: an unencrypted key, and the same key encrypted at a small scrypt
    # cost (opslimit 2^15, memlimit 2^24: N = 2^10, r = 8, p = 1) under the targets' passphrase.
    seed = hashlib.sha256(b"signet fuzz minisign key").digest()
    key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    key_id = hashlib.sha256(b"signet fuzz minisign key id").digest()[:8]
    checksum = hashlib.blake2b(b"Ed" + key_id + seed + public, digest_size=32).digest()
    material = key_id + seed + public + checksum
    key_id_text = "%X" % struct.unpack("<Q", key_id)[0]

    def secret_file(kdf, salt, ops, mem, body, comment):
        blob = b"Ed" + kdf + b"B2" + salt + struct.pack("<QQ", ops, mem) + body
        return f"untrusted comment: {comment}\n{b64(blob)}\n"

    write("minisign-seckey", "unencrypted.key", secret_file(b"\0\0", bytes(32), 0, 0, material, "minisign unencrypted secret key"))
    write("minisign-seckey", "unencrypted-zero-checksum.key",
          secret_file(b"\0\0", bytes(32), 0, 0, material[:72] + bytes(32), "minisign unencrypted secret key"))
    salt = hashlib.sha256(b"signet fuzz minisign salt").digest()
    stream = hashlib.scrypt(PASS.encode(), salt=salt, n=1 << 10, r=8, p=1, dklen=len(material))
    encrypted = bytes(a ^ b for a, b in zip(material, stream))
    write("minisign-seckey", "encrypted-small-cost.key", secret_file(b"Sc", salt, 1 << 15, 1 << 24, encrypted, "minisign encrypted secret key"))
    write("minisign-pubkey", "made-here.pub", f"untrusted comment: minisign public key {key_id_text}\n{b64(b'Ed' + key_id + public)}\n")

    message = b"Signet fuzz message\n"
    trusted = b"timestamp:1800000000\tfile:message.txt\thashed"
    signature = key.sign(hashlib.blake2b(message, digest_size=64).digest())
    glob = key.sign(signature + trusted)
    write("minisign-sig", "made-here.minisig",
          f"untrusted comment: signature from minisign secret key\n{b64(b'ED' + key_id + signature)}\n"
          f"trusted comment: {trusted.decode()}\n{b64(glob)}\n")


# MARK: Passwords and checksums

def passwords():
    salt = b"fuzz-salt-16byte"
    scrypt = hashlib.scrypt(b"password", salt=salt, n=1 << 4, r=8, p=1, dklen=32)
    pbkdf2 = hashlib.pbkdf2_hmac("sha256", b"password", salt, 1000, 32)
    unpadded = lambda data: b64(data).rstrip("=")
    write("phc", "scrypt-ln4-password", f"$scrypt$ln=4,r=8,p=1${unpadded(salt)}${unpadded(scrypt)}")
    write("phc", "pbkdf2-i1000-password", f"$pbkdf2-sha256$i=1000${unpadded(salt)}${unpadded(pbkdf2)}")
    write("phc", "scrypt-default-cost", f"$scrypt$ln=17,r=8,p=1${unpadded(salt)}${unpadded(scrypt)}")
    write("phc", "argon2id-unsupported", "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG")
    write("phc", "scrypt-with-version", f"$scrypt$v=1$ln=4,r=8,p=1${unpadded(salt)}${unpadded(scrypt)}")
    write("phc", "duplicate-parameter", f"$scrypt$ln=4,ln=5,r=8,p=1${unpadded(salt)}${unpadded(scrypt)}")
    write("phc", "padded-salt", f"$scrypt$ln=4,r=8,p=1${b64(salt[:15])}${unpadded(scrypt)}")
    write("phc", "too-costly", f"$scrypt$ln=20,r=32,p=16${unpadded(salt)}${unpadded(scrypt)}")

    data = b"hello\n"
    digests = {name: hashlib.new(name, data).hexdigest() for name in ["md5", "sha1", "sha256", "sha384", "sha512"]}
    write("checksum-line", "gnu-sha256", f"{digests['sha256']}  hello.txt\n{digests['sha256']} *binary mode.bin\n")
    write("checksum-line", "gnu-escaped", f"\\{digests['sha256']}  new\\nline\\\\back\\rslash.txt\n")
    write("checksum-line", "bsd-tagged",
          "".join(f"{name.upper()} (hello.txt) = {digest}\n" for name, digest in digests.items()))
    write("checksum-line", "bsd-escaped", f"\\SHA256 (a\\nb) = {digests['sha256']}\n")
    write("checksum-line", "mixed-with-comments",
          f"# made by sha256sum\n\n{digests['sha512']}  dir/file name with spaces\r\n{digests['md5'].upper()}  upper.txt\nnot a line\n")
    write("checksum-line", "tricky-names",
          f"SHA256 (a) = b) = {digests['sha256']}\n{digests['sha1']}  *star\n{digests['sha256']}  caf\u00e9 \u0301x\n")


# MARK: Bundles

BUNDLE_SEED = hashlib.sha256(b"signet fuzz bundle key").digest()


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def make_zip(entries, zip64=False):
    """Stored entries laid out as ZipWriter writes them; zip64 forces the ZIP64 forms."""
    out, central = b"", b""
    for name, data in entries:
        name_bytes = name.encode()
        crc = zlib.crc32(data) & 0xFFFFFFFF
        offset = len(out)
        size32 = 0xFFFFFFFF if zip64 else len(data)
        local_extra = struct.pack("<HHQQ", 1, 16, len(data), len(data)) if zip64 else b""
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if zip64 else 20, 0x0800, 0, 0, 0x0021, crc, size32, size32,
                           len(name_bytes), len(local_extra)) + name_bytes + local_extra + data
        extra = struct.pack("<HHQQ", 1, 16, len(data), len(data)) if zip64 else b""
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (3 << 8) | 45, 45 if zip64 else 20, 0x0800, 0, 0, 0x0021, crc,
                               size32, size32, len(name_bytes), len(extra), 0, 0, 0, 0o100644 << 16, offset) + name_bytes + extra
    directory_offset = len(out)
    out += central
    count = len(entries)
    if zip64:
        record_offset = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, (3 << 8) | 45, 45, 0, 0, count, count, len(central), directory_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, record_offset, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central), directory_offset, 0)
    return out


def manifest(files, name="app", version=3, expires="2031-01-01T00:00:00Z"):
    listed = [{"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
              for path, data in sorted(files, key=lambda f: f[0].encode())]
    return canonical({"created": "2026-11-23T01:31:29Z", "expires": expires, "files": listed,
                      "format": "signet-bundle-manifest-v1", "name": name, "version": version})


def signature_list(manifest_bytes, key=None):
    key = key or ed25519.Ed25519PrivateKey.from_private_bytes(BUNDLE_SEED)
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    keyid = "sha256/" + b64(hashlib.sha256(spki).digest())
    return canonical({"format": "signet-bundle-signatures-v1",
                      "signatures": [{"alg": "ed25519", "keyid": keyid, "sig": b64(key.sign(manifest_bytes))}]})


def bundle(files, zip64=False, key=None, **manifest_options):
    files = sorted(files, key=lambda f: f[0].encode())
    manifest_bytes = manifest(files, **manifest_options)
    entries = files + [(".signet/manifest.json", manifest_bytes), (".signet/signatures.json", signature_list(manifest_bytes, key))]
    return make_zip(entries, zip64), manifest_bytes


def bundles():
    files = [("a.txt", b"hello\n"), ("dir/b.bin", bytes(range(32))), ("empty", b"")]
    signed, manifest_bytes = bundle(files)
    write("bundle", "signed-three-files.zip", signed)
    write("bundle", "signed-zip64.zip", bundle(files, zip64=True)[0])
    write("bundle", "signed-never-expires.zip", bundle([("only.txt", b"x")], expires=None)[0])
    write("bundle", "signed-expired.zip", bundle([("only.txt", b"x")], expires="2026-12-01T00:00:00Z")[0])
    write("bundle", "signed-unicode-name.zip", bundle([("caf\u00e9/\u65e5\u672c.txt", b"unicode")])[0])
    write("bundle", "signed-no-files.zip", bundle([])[0])
    other = ed25519.Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"another key").digest())
    write("bundle", "signed-by-untrusted-key.zip", bundle(files, key=other)[0])
    tampered = signed.replace(b"hello\n", b"HELLO\n", 1)
    write("bundle", "content-tampered.zip", tampered)
    unlisted = make_zip(sorted(files) + [("extra.txt", b"!"), (".signet/manifest.json", manifest_bytes),
                                         (".signet/signatures.json", signature_list(manifest_bytes))])
    write("bundle", "unlisted-entry.zip", unlisted)

    write("zip", "bundle-three-files.zip", signed)
    write("zip", "zip64-records.zip", make_zip(files, zip64=True))
    write("zip", "one-entry.zip", make_zip([("a.txt", b"hello\n")]))
    write("zip", "empty-archive.zip", make_zip([]))
    write("zip", "traversal-names.zip", make_zip([("../evil", b"x"), ("/abs", b"y"), ("a\\b", b"z"), ("C:x", b"w")]))
    write("zip", "case-collision.zip", make_zip([("Readme", b"1"), ("README", b"2"), ("a", b"3"), ("a/b", b"4")]))
    compressed = bytearray(make_zip([("c.txt", b"compress me")]))
    compressed[8:10] = struct.pack("<H", 8)  # local header method: deflate
    write("zip", "method-mismatch.zip", bytes(compressed))
    with_comment = make_zip([("a.txt", b"hi")])
    write("zip", "archive-comment.zip", with_comment[:-2] + struct.pack("<H", 5) + b"hello")
    write("zip", "prefixed-by-script.zip", b"#!/bin/sh\nexit 0\n" + make_zip([("a.txt", b"hi")]))
    write("zip", "truncated.zip", signed[: len(signed) // 2])

    # Canonical JSON, manifests, signature lists and trust roots.
    write("manifest", "three-files.json", manifest_bytes)
    write("manifest", "never-expires.json", manifest([("x", b"")], expires=None))
    write("manifest", "not-canonical.json", json.dumps(json.loads(manifest_bytes), indent=1))
    write("manifest", "unknown-member.json", canonical(dict(json.loads(manifest_bytes), extra=1)))
    write("manifest", "bad-name.json", manifest([("x", b"")], name="-bad"))
    write("signatures", "one-signature.json", signature_list(manifest_bytes))
    write("signatures", "empty-list.json", canonical({"format": "signet-bundle-signatures-v1", "signatures": []}))
    write("signatures", "mac-algorithm.json", signature_list(manifest_bytes).replace(b'"ed25519"', b'"hmac-sha256"'))

    trusted = ed25519.Ed25519PrivateKey.from_private_bytes(BUNDLE_SEED)
    p256 = load("p256.pem")
    rsa2048 = load("rsa2048.pem")

    def trusted_key(key, alg):
        spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        return {"alg": alg, "keyid": "sha256/" + b64(hashlib.sha256(spki).digest()), "public-key": b64(spki)}

    root1 = {"format": "signet-trust-root-v1", "keys": [trusted_key(trusted, "ed25519")], "threshold": 1, "version": 1}
    write("trust-root", "one-key.json", canonical({"root": root1, "signatures": []}) + b"\n")
    root2 = {"format": "signet-trust-root-v1", "threshold": 2, "version": 2,
             "keys": [trusted_key(p256, "ecdsa-p256-sha256"), trusted_key(rsa2048, "rsa-pss-sha256")]}
    spki = trusted.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    rotation = [{"alg": "ed25519", "keyid": "sha256/" + b64(hashlib.sha256(spki).digest()), "sig": b64(trusted.sign(canonical(root2)))}]
    write("trust-root", "rotation-two-keys.json", canonical({"root": root2, "signatures": rotation}) + b"\n")
    write("trust-root", "keyid-mismatch.json",
          canonical({"root": dict(root1, keys=[dict(root1["keys"][0], keyid="sha256/" + b64(bytes(32)))]), "signatures": []}))
    write("trust-root", "threshold-too-high.json", canonical({"root": dict(root1, threshold=2), "signatures": []}))

    for name, data in [("manifest.json", manifest_bytes), ("signatures.json", signature_list(manifest_bytes)),
                       ("trust-root.json", canonical({"root": root1, "signatures": []}))]:
        write("json", name, data)
    write("json", "numbers.json", b'[0,-0,1e3,1.0E+2,-9223372036854775808,9223372036854775807,12.50e1]')
    write("json", "strings.json", '{"a":"\\u00e9\\ud83d\\ude00\\n\\"\\\\\\/","b":"caf\u00e9","e\u0301":"",' '"\\u0000":null}'.encode())
    write("json", "nested.json", b"[" * 16 + b"]" * 16)
    write("json", "too-deep.json", b"[" * 17 + b"]" * 17)
    write("json", "duplicate-members.json", b'{"a":1,"a":2,"b":{"c":true,"c":false}}')
    write("json", "refused-fraction.json", b'{"x":1.5}')
    write("json", "lone-surrogate.json", b'"\\ud800"')


# MARK: HTTP

def http():
    vectors = os.path.join(ROOT, "Tests", "SignetHTTPTests", "Vectors")
    with open(os.path.join(vectors, "rfc9421.json")) as f:
        rfc9421 = json.load(f)
    with open(os.path.join(vectors, "rfc9530.json")) as f:
        rfc9530 = json.load(f)
    for index, example in enumerate(rfc9421["examples"]):
        label, value = example["label"], example["signatureInput"]
        name = f"rfc9421-{index:02d}-{example['id']}".replace("/", "-").replace(" ", "-")
        write("signature-input", name, f"{label}={value}")
        write("signature", name, f"{label}=:{example['signature']}:")
        lines = [f"{label}={value}"]
        if example["message"] == "response":
            lines.append("@status: 200")
        elif example["message"] == "inline" and example.get("messageData"):
            data = example["messageData"]
            if data.get("status"):
                lines.append(f"@status: {data['status']}")
            for header_name, header_value in data.get("headers", []):
                lines.append(f"{header_name}: {header_value}")
        write("signature-base", name, "\n".join(lines) + "\n")
    write("signature-input", "two-labels", 'sig1=("@method" "@path");created=1;keyid="a", sig2=("@authority");created=2;keyid="b"')
    write("signature-input", "every-parameter",
          'sig1=("@query-param";name="Pet" "example-dict";key="a" "example-dict";sf "content-digest";bs "@method";req);'
          'created=1618884473;expires=1618884773;nonce="n";alg="ed25519";keyid="k";tag="t";x-other=?1')
    write("signature-input", "duplicate-label-display-string", 'sig1=("@method");created=1;keyid="k", sig2=%"\\", sig1=("@path")')
    write("signature-input", "duplicate-component", 'sig1=("@method" "@method");keyid="k"')
    write("signature", "two-signatures", "sig1=:YWJj:, sig2=:ZGVm:")
    write("signature", "not-bytes", 'sig1="YWJj"')
    write("signature-base", "every-derived",
          'sig1=("@method" "@target-uri" "@authority" "@scheme" "@request-target" "@path" "@query" "@query-param";name="param");keyid="k"\n'
          "@method: GET\n@path: /a%20b?param=1&param2=%E2%82%AC\n@authority: Example.COM:443\n@scheme: HTTPS\n")
    write("signature-base", "structured-fields",
          'sig1=("example-dict";sf "example-dict";key="b" "x-list";bs "content-digest");keyid="k"\n'
          "x-list: a, b\nx-list: c\nContent-Digest: sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:\n")
    write("signature-base", "response-with-request",
          'sig1=("@status" "content-type" "@method";req "@authority";req "content-digest";req);keyid="k"\n@status: 503\n')
    for vector in rfc9530["vectors"]:
        if vector["field"] == "Content-Digest":
            write("content-digest", f"rfc9530-{vector['id']}", vector["digestHeaderValue"])
    sha256 = b64(hashlib.sha256(b'{"hello": "world"}').digest())
    sha512 = b64(hashlib.sha512(b'{"hello": "world"}').digest())
    write("content-digest", "both-algorithms", f"sha-256=:{sha256}:, sha-512=:{sha512}:")
    write("content-digest", "unknown-and-known", f"md5=:AAAA:, sha-256=:{sha256}:;x=1, id-sha-256=:{sha256}:")
    write("content-digest", "wrong-length", "sha-256=:AAAA:")
    for index, text in enumerate([
        "@method", "@target-uri", '"@query-param";name="Pet"', 'example-dict;key="a"', "example-dict;sf", "content-digest;req",
        "x-header;bs", '"content-type"', "@status", "@unknown", "Upper-Case", 'a;name="x"', "a;bs;sf",
    ]):
        write("signature-component", f"component-{index:02d}", text)
    dictionaries = [
        'sig1=("@method" "@target-uri" "content-digest");created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd"',
        "sig1=:YWJj+/89=:, sig2=::, sig3=:=a=:",
        'a=1, b;x=?0;y, c=(a b c);p=-42, d=tok/en:x, *e="q\\"u\\\\o", f=T%k*',
        "a=1,\tb=2,  c=( 1  2 );z, d=( )",
        "a=1.5, b=-0.001, c=123456789012.123, d=-1.50, e=00.0, f=-0",
        "a=123456789012345, b=-123456789012345, c=@1659578233, d=@-1",
        'a=%"caf%c3%a9", b=%"\\", c=%"%00", d=%"%e2%82%ac %f0%9f%98%80", e=%""',
        'a;p=1;p=2, b=(1;x 2;x=?0);q;q=%"x"',
        "   a=1 \t ",
        "a=1,",
        'sig1=("@method");created=1;keyid="k", sig2=%"\\"", sig1=("@path")',
        "a=1234567890123456",
        'a=%"%C3%A9"',
    ]
    for index, text in enumerate(dictionaries):
        write("sf-dictionary", f"dictionary-{index:02d}", text)


# MARK: Vault

def vault():
    p256_der = openssl("pkey", "-in", os.path.join(KEYS, "p256.pem"), "-outform", "DER")
    rows = {
        "password-item": [b"password", b"api.example.com", b"deploy-bot", b"1700000000000", b"1700000000123",
                          b'{"attributes":{"url":"https://api.example.com"},"comment":"c","label":"API"}', b"s3cret"],
        "private-key-item": [b"private-key", b"signing", b"release", b"1700000000000", b"1700000000000", b'{"attributes":{}}', p256_der],
        "unicode-names": [b"password", "caf\u00e9 \u65e5\u672c".encode(), b"\xf0\x9f\x94\x91", b"0", b"0", b"{}", b"x"],
        "control-in-name": [b"password", b"evil\x1b[31m", b"a", b"1", b"2", b"{}", b"x"],
        "bidi-in-name": [b"password", "a\u202eb".encode(), b"a", b"1", b"2", b"{}", b"x"],
        "unknown-kind": [b"ssh-key", b"s", b"a", b"1", b"2", b"{}", b"x"],
        "text-date": [b"password", b"s", b"a", b"yesterday", b"2", b"{}", b"x"],
        "details-not-json": [b"password", b"s", b"a", b"1", b"2", b"[1,2", b"x"],
        "details-wrong-types": [b"password", b"s", b"a", b"1", b"2", b'{"attributes":[],"label":3}', b"x"],
    }
    for name, fields in rows.items():
        write("vault-item", name, b"\0".join(fields))
    write("vault-item", "kind-only", b"password")
    for index, text in enumerate(["scrypt$ln=17,r=8,p=1", "scrypt$ln=15,r=8,p=2", "scrypt$p=1,r=8,ln=10", "none",
                                  "scrypt$ln=21,r=8,p=1", "scrypt$ln=+17,r=8,p=1", "scrypt$ln=17,ln=18,r=8,p=1", "scrypt$ln=17,r=8"]):
        write("vault-kdf", f"kdf-{index:02d}", text)
    for index, text in enumerate(["vault:api.example.com/deploy-bot", "vault:a%2Fb/c%25d", "vault:caf%C3%A9/x", "vault:a/b/c",
                                  "vault:/x", "vault:a%2/b", "vault:a%FF/b", "file:a/b"]):
        write("vault-key-ref", f"reference-{index:02d}", text)


# MARK: CBOR, COSE keys, App Attest

def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for info, size in [(24, 1), (25, 2), (26, 4), (27, 8)]:
        if n < 1 << (8 * size):
            return bytes([major << 5 | info]) + n.to_bytes(size, "big")
    raise ValueError(n)


def cbor(value):
    """The CBOR of `value` (int, bytes, str, list, or a map as a list of (key, value) tuples;
    True/False/None), every head in its shortest form."""
    if value is True or value is False or value is None:
        return {False: b"\xf4", True: b"\xf5", None: b"\xf6"}[value]
    if isinstance(value, int):
        return cbor_head(0, value) if value >= 0 else cbor_head(1, -1 - value)
    if isinstance(value, bytes):
        return cbor_head(2, len(value)) + value
    if isinstance(value, str):
        return cbor_head(3, len(value.encode())) + value.encode()
    if isinstance(value, list) and value and all(isinstance(item, tuple) for item in value):
        return cbor_head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value)
    if isinstance(value, list):
        return cbor_head(4, len(value)) + b"".join(cbor(item) for item in value)
    raise TypeError(value)


def cbor_item_end(data, offset):
    """Where the definite-length CBOR item starting at `offset` ends (enough of a reader to
    take apart the genuine samples)."""
    initial = data[offset]
    major, info = initial >> 5, initial & 0x1F
    offset += 1
    if info < 24:
        argument = info
    else:
        size = {24: 1, 25: 2, 26: 4, 27: 8}[info]
        argument = int.from_bytes(data[offset:offset + size], "big")
        offset += size
    if major in (2, 3):
        return offset + argument
    if major == 4:
        for _ in range(argument):
            offset = cbor_item_end(data, offset)
        return offset
    if major == 5:
        for _ in range(2 * argument):
            offset = cbor_item_end(data, offset)
        return offset
    if major == 6:
        return cbor_item_end(data, offset)
    return offset


def cbor_map_bytes(data, key):
    """The byte string under the text `key` of the CBOR map `data` (definite lengths)."""
    initial = data[0]
    assert initial >> 5 == 5 and initial & 0x1F < 24, "a small map"
    offset = 1
    for _ in range(initial & 0x1F):
        key_end = cbor_item_end(data, offset)
        value_end = cbor_item_end(data, key_end)
        if data[offset:key_end] == cbor(key):
            assert data[key_end] >> 5 == 2, f"{key} is not a byte string"
            head = 1 + {24: 1, 25: 2, 26: 4, 27: 8}.get(data[key_end] & 0x1F, 0)
            return data[key_end + head:value_end]
        offset = value_end
    raise KeyError(key)


def attestation():
    """CBOR items (RFC 8949 Appendix A and some the reader refuses), COSE keys (published, from
    the key fixtures, refused), App Attest attestations and assertions (genuine samples) and
    the authenticator data taken out of them."""
    core_vectors = os.path.join(ROOT, "Tests", "SignetCoreTests", "Vectors", "cbor")
    apple = os.path.join(ROOT, "Tests", "SignetAttestationTests", "Vectors", "apple")

    def sample(name):
        with open(os.path.join(apple, name), "rb") as f:
            return f.read()

    # cbor: Appendix A items of every major type and float width, and some the reader refuses.
    with open(os.path.join(core_vectors, "appendix_a.json")) as f:
        appendix = {vector["hex"]: bytes.fromhex(vector["hex"]) for vector in json.load(f)}
    for name, hex_text in [("uint64-max", "1bffffffffffffffff"), ("bignum-tag-2", "c249010000000000000000"),
                           ("negative-2-64", "3bffffffffffffffff"), ("half-65504", "f97bff"), ("single-100000", "fa47c35000"),
                           ("double-1.1", "fb3ff199999999999a"), ("half-nan", "f97e00"), ("simple-255", "f8ff"),
                           ("tag-0-date", "c074323031332d30332d32315432303a30343a30305a"), ("text-utf8", "64f0908591"),
                           ("nested-arrays", "8301820203820405"), ("map-text-keys", "a56161614161626142616361436164614461656145"),
                           ("map-int-keys", "a201020304"), ("indefinite-map", "bf6346756ef563416d7421ff"),
                           ("indefinite-bytes", "5f42010243030405ff"), ("simple-24-not-well-formed", "f818")]:
        write("cbor", name, appendix[hex_text])
    write("cbor", "duplicate-key-two-forms", bytes.fromhex("a20101180102"))
    write("cbor", "length-past-end", bytes.fromhex("5bffffffffffffffff"))
    write("cbor", "nested-16", b"\x81" * 15 + b"\x80")
    write("cbor", "nested-17", b"\x81" * 16 + b"\x80")
    write("cbor", "reserved-info-28", b"\x1c")
    write("cbor", "invalid-utf8", bytes.fromhex("62c328"))

    # cose-key: the published keys, RSA keys from the fixtures, and the App Attest key.
    with open(os.path.join(core_vectors, "cose-keys.json")) as f:
        for number, key in enumerate(json.load(f)["keys"]):
            write("cose-key", f"vector-{number:02d}-{key['expect']}", bytes.fromhex(key["cose"]))
    for name, seed in [("rsa2048", "rsa2048-rs256"), ("rsa1024", "rsa1024-rs256-weak")]:
        numbers = load(name + ".pem").public_key().public_numbers()
        write("cose-key", seed, cbor([(1, 3), (3, -257), (-1, unsigned(numbers.n)), (-2, unsigned(numbers.e))]))
    p256 = load("p256.pem").public_key().public_numbers()
    write("cose-key", "p256-alg-eddsa-mismatch", cbor([(1, 2), (3, -8), (-1, 1), (-2, unsigned(p256.x, 32)), (-3, unsigned(p256.y, 32))]))
    write("cose-key", "p256-no-alg", cbor([(1, 2), (-1, 1), (-2, unsigned(p256.x, 32)), (-3, unsigned(p256.y, 32))]))

    # app-attest-object and app-attest-assertion: genuine samples (README.md beside them).
    attestation_names = ["veehaitch-ios-14.2", "apple-docs-example-2026"]
    for name in attestation_names:
        write("app-attest-object", name + ".attestation.cbor", sample(name + ".attestation.cbor"))
    for name in ["veehaitch-ios-14.2-assertion1", "webauthn4j-kayak-assertion1"]:
        write("app-attest-assertion", name + ".assertion.cbor", sample(name + ".assertion.cbor"))

    # authenticator-data: taken out of the genuine samples, and built with extensions.
    for name in attestation_names:
        write("authenticator-data", name + ".authdata", cbor_map_bytes(sample(name + ".attestation.cbor"), "authData"))
    assertion_auth = cbor_map_bytes(sample("veehaitch-ios-14.2-assertion1.assertion.cbor"), "authenticatorData")
    write("authenticator-data", "veehaitch-ios-14.2-assertion1.authdata", assertion_auth)
    credential = cbor_map_bytes(sample("veehaitch-ios-14.2.attestation.cbor"), "authData")
    extensions = cbor([("credProtect", 2), ("hmac-secret", True)])
    write("authenticator-data", "credential-and-extensions", credential[:32] + bytes([credential[32] | 0x85]) + credential[33:] + extensions)
    write("authenticator-data", "extensions-only", assertion_auth[:32] + b"\x81" + assertion_auth[33:] + extensions)


# MARK: Dictionaries

def dictionaries():
    """Fuzz/dictionaries/<target>.dict: tokens of each text format (bytes given as latin-1 code points)."""
    pem = ["-----BEGIN ", "-----END ", "-----", "PRIVATE KEY", "PUBLIC KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY",
           "RSA PUBLIC KEY", "EC PRIVATE KEY", "EC PARAMETERS", "CERTIFICATE", "OPENSSH PRIVATE KEY", "Proc-Type: 4,ENCRYPTED",
           "DEK-Info: ", "\r\n", "\n", "=", "==", "MII", "MC", "MH", "AAAA"]
    der = ["\x30\x82", "\x02\x01\x00", "\x02\x01\x01", "\x04\x20", "\x03\x42\x00\x04", "\x05\x00",
           "\x06\x07\x2a\x86\x48\xce\x3d\x02\x01", "\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07", "\x06\x05\x2b\x81\x04\x00\x22",
           "\x06\x03\x2b\x65\x70", "\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01", "\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d",
           "\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0c", "\x06\x09\x60\x86\x48\x01\x65\x03\x04\x01\x2a", "\xa0", "\xa1",
           "\x81\x80", "\x82\x01\x01"]
    jwk = ["{", "}", '"kty"', '"crv"', '"x"', '"y"', '"d"', '"n"', '"e"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', '"kid"', '"RSA"',
           '"EC"', '"OKP"', '"P-256"', '"P-384"', '"Ed25519"', '"AQAB"', ":", ",", "null"]
    ssh = ["ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-nistp256 ", "ecdsa-sha2-nistp384 ", "nistp256", "nistp384", "AAAAB3NzaC1yc2E",
           "AAAAC3NzaC1lZDI1NTE5", "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY", " comment\n"]
    minisign = ["untrusted comment: ", "trusted comment: ", "minisign public key ", "minisign encrypted secret key",
                "signature from minisign secret key", "RW", "RU", "ED", "Ed", "Sc", "B2", "timestamp:", "\tfile:", "\thashed",
                "\n", "\r\n", "="]
    phc = ["$scrypt$", "$pbkdf2-sha256$", "$argon2id$", "$v=19", "ln=", "r=", "p=", "i=", ",", "$", "=", "17", "8", "1", "600000"]
    checksum = ["  ", "*", "\\", " (", ") = ", "SHA256", "SHA384", "SHA512", "MD5", "SHA1", "\\n", "\\r", "\\\\", "#", "\n", "\r\n"]
    js = ["{", "}", "[", "]", '"', ":", ",", "\\u", "\\ud83d\\ude00", '\\"', "\\\\", "true", "false", "null", "1e3", "-0",
          "9223372036854775807", "-9223372036854775808", ".5", "E+"]
    bundle_json = js + ['"format"', '"signet-bundle-manifest-v1"', '"signet-bundle-signatures-v1"', '"signet-trust-root-v1"',
                        '"name"', '"version"', '"created"', '"expires"', '"files"', '"path"', '"size"', '"sha256"',
                        '"signatures"', '"keyid"', '"alg"', '"sig"', '"root"', '"keys"', '"threshold"', '"public-key"',
                        '"ed25519"', '"ecdsa-p256-sha256"', '"rsa-pss-sha256"', '"sha256/', '"2031-01-01T00:00:00Z"',
                        "MCowBQYDK2VwAyEA"]
    sf = ["sig1=", "sig2=", "(", ")", ";", "=", ",", " ", '"', '\\"', ":", "::", "?1", "?0", "@", '%"', "%c3%a9", "*",
          "created=", "expires=", "nonce=", "alg=", "keyid=", "tag=", '"@method"', '"@target-uri"', '"@authority"', '"@scheme"',
          '"@request-target"', '"@path"', '"@query"', '"@query-param"', '"@status"', '"content-digest"', '"content-type"',
          ";name=", ";key=", ";sf", ";bs", ";req", '"ed25519"', '"rsa-pss-sha512"', "1618884473"]
    content_digest = ["sha-256=:", "sha-512=:", "md5=:", "id-sha-256=:", ":", ", ", ";x=1", "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="]
    base = sf + ["\n", "@method: ", "@path: ", "@authority: ", "@scheme: ", "@status: ", "Host: ", "Example-Dict: ",
                 "Content-Digest: ", "x-list: ", "?", "&", "%20", "/"]
    component = ["@method", "@target-uri", "@authority", "@path", "@query", "@query-param", "@status", '"', ";name=", ";key=",
                 ";sf", ";bs", ";req", "=?0", "=?1", "example-dict", "content-digest"]
    vault_item = ["\x00", "password", "private-key", '{"attributes":{}}', '"label"', '"comment"', '"attributes"', "1700000000000",
                  "\xe2\x80\xae", "\x1b"] + js
    zip_tokens = ["PK\x03\x04", "PK\x01\x02", "PK\x05\x06", "PK\x06\x06", "PK\x06\x07", "\x01\x00\x10\x00", "\xff\xff\xff\xff",
                  "\xff\xff", "\x00\x08", "\x2d\x03", "\x00\x00\xa4\x81", "\x00\x00\xed\x41", "\x00\x00\xff\xa1", ".signet/manifest.json",
                  ".signet/signatures.json", "../", "/"]
    cbor_heads = ["\x18", "\x19", "\x1a", "\x1b", "\x1b\xff\xff\xff\xff\xff\xff\xff\xff", "\x38", "\x40", "\x58\x20", "\x59\x01\x00",
                  "\x5b\xff\xff\xff\xff\xff\xff\xff\xff", "\x60", "\x78", "\x80", "\x81", "\x82", "\x98", "\x9b\xff\xff\xff\xff\xff\xff\xff\xff",
                  "\xa0", "\xa1", "\xa2", "\xa5", "\xb8", "\xc2", "\xc3", "\xd8\x18", "\x5f", "\x7f", "\x9f", "\xbf", "\xff", "\xf4", "\xf5",
                  "\xf6", "\xf7", "\xf8", "\xf8\x20", "\xf9", "\xf9\x7e\x00", "\xfa", "\xfb", "\x1c", "\x3d", "\xfe"]
    cose = ["\x01\x01", "\x01\x02", "\x01\x03", "\x03\x26", "\x03\x27", "\x03\x38\x22", "\x03\x39\x01\x00", "\x20\x01", "\x20\x02",
            "\x20\x06", "\x21\x58\x20", "\x21\x58\x30", "\x22\x58\x20", "\x22\x58\x30", "\x20\x59\x01\x00", "\x21\x43\x01\x00\x01"]
    attestation_keys = ["fmt", "attStmt", "x5c", "receipt", "authData", "apple-appattest", "signature", "authenticatorData"]
    cbor_tokens = cbor_heads + attestation_keys + [chr(0x60 + len(key)) + key for key in attestation_keys]
    auth_data = ["\x40", "\x41", "\x45", "\x80", "\xc5", "\x00\x20", "\x03\xff", "\x04\x00", "appattestdevelop",
                 "appattest\x00\x00\x00\x00\x00\x00\x00", "\xa5\x01\x02\x03\x26\x20\x01\x21\x58\x20"]
    tokens = {
        "key-auto": pem + jwk + ssh + ["untrusted comment: minisign public key "],
        "key-pem": pem, "key-der": der, "key-pkcs1": der, "key-pkcs8": der, "key-sec1": der, "key-spki": der,
        "key-pkcs8-encrypted": der + pem, "key-jwk": jwk, "key-openssh": ssh, "key-ios": ["BAA", "BH", "MII", "==", "="],
        "key-openssh-private": ["-----BEGIN OPENSSH PRIVATE KEY-----\n", "-----END OPENSSH PRIVATE KEY-----\n",
                                "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB", "AAAAC3NzaC1lZDI1NTE5", "AAAAB3NzaC1yc2E",
                                "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY", "AQIDBAUGBw==", "\n", "="],
        "minisign-pubkey": minisign, "minisign-seckey": minisign, "minisign-sig": minisign,
        "phc": phc, "checksum-line": checksum, "json": js, "manifest": bundle_json, "signatures": bundle_json,
        "trust-root": bundle_json, "signature-input": sf, "signature": sf, "content-digest": content_digest,
        "signature-base": base, "signature-component": component, "sf-dictionary": sf, "vault-item": vault_item,
        "vault-kdf": ["scrypt$", "ln=", "r=", "p=", ",", "none", "17", "8", "1", "+"],
        "vault-key-ref": ["vault:", "/", "%2F", "%25", "%", "%C3%A9"],
        "zip": zip_tokens, "bundle": zip_tokens + bundle_json,
        "cbor": cbor_tokens, "cose-key": cbor_heads + cose, "authenticator-data": auth_data + cbor_heads + cose,
        "app-attest-object": cbor_tokens + auth_data + ["\x30\x82", "\x06\x09\x2a\x86\x48\x86\xf7\x63\x64\x08\x02"],
        "app-attest-assertion": cbor_tokens + auth_data + ["\x30\x44\x02\x20", "\x30\x45\x02\x21\x00"],
    }

    def quoted(token):
        out = ""
        for byte in token.encode("latin-1"):
            if byte == 0x22:
                out += '\\"'
            elif byte == 0x5C:
                out += "\\\\"
            elif 0x20 <= byte < 0x7F:
                out += chr(byte)
            else:
                out += "\\x%02X" % byte
        return '"' + out + '"'

    folder = os.path.join(ROOT, "Fuzz", "dictionaries")
    os.makedirs(folder, exist_ok=True)
    for target, words in tokens.items():
        unique = list(dict.fromkeys(words))
        with open(os.path.join(folder, target + ".dict"), "w") as f:
            f.write(f"# libFuzzer dictionary for the {target} target (Scripts/fuzz passes it with -dict=); made by Fuzz/make-seeds.py.\n")
            f.writelines(quoted(word) + "\n" for word in unique)


def x509():
    """Certificates, chains and CSRs made by openssl in PEM and DER; pin set files; PKCS#12
    files from `openssl pkcs12 -export` in OpenSSL 3's default form and with -legacy, all under
    the fuzz passphrase."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        def path(name):
            return os.path.join(tmp, name)
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca.key"),
                "-subj", "/CN=Fuzz CA/O=Signet", "-days", "3650", "-out", path("ca.pem"),
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("leaf.key"),
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-out", path("leaf.csr"))
        openssl("x509", "-req", "-in", path("leaf.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-set_serial", "7",
                "-days", "3650", "-copy_extensions", "copy", "-out", path("leaf.pem"))
        ca = open(path("ca.pem"), "rb").read()
        leaf = open(path("leaf.pem"), "rb").read()
        write("x509-document", "ca.pem", ca)
        write("x509-document", "chain.pem", leaf + ca)
        write("x509-document", "leaf.der", openssl("x509", "-in", path("leaf.pem"), "-outform", "DER"))
        write("x509-document", "leaf.csr", open(path("leaf.csr"), "rb").read())
        write("x509-document", "leaf.csr.der", openssl("req", "-in", path("leaf.csr"), "-outform", "DER"))
        with open(path("pass"), "w") as f:
            f.write(PASS)
        write("pkcs12", "default.p12", openssl("pkcs12", "-export", "-inkey", path("leaf.key"), "-in", path("leaf.pem"),
                                               "-certfile", path("ca.pem"), "-name", "fuzz", "-passout", "file:" + path("pass")))
        write("pkcs12", "legacy.p12", openssl("pkcs12", "-export", "-legacy", "-inkey", path("leaf.key"), "-in", path("leaf.pem"),
                                              "-passout", "file:" + path("pass")))
    pin = "sha256/" + b64(hashlib.sha256(b"fuzz pin one").digest())
    backup = "sha256/" + b64(hashlib.sha256(b"fuzz pin two").digest())
    write("pin-set", "one-host.json", json.dumps({"version": 1, "hosts": [
        {"host": "api.example.com", "pins": [pin, backup], "includeSubdomains": True,
         "expires": "2031-01-01T00:00:00Z", "reportOnly": False, "reportURIs": ["https://report.example.com/pins"]}]}, indent=2))
    write("pin-set", "minimal.json", json.dumps({"version": 1, "hosts": [{"host": "example.org", "pins": [pin, backup]}]}))
    write("pin-set", "one-pin-refused.json", json.dumps({"version": 1, "hosts": [{"host": "example.org", "pins": [pin]}]}))


def pkcs11_uris():
    # RFC 7512 section 3.4's examples, the forms signet token prints, and some edge cases.
    uris = [
        "pkcs11:",
        "pkcs11:object=my-pubkey;type=public",
        "pkcs11:object=my-key;type=private?pin-source=file:/etc/token",
        "pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;type=cert;id=%69%95%3E%5C%F4%BD%EC%91;serial=?pin-source=file:/etc/token_pin",
        "pkcs11:object=my-sign-key;type=private?module-name=mypkcs11",
        "pkcs11:object=my-sign-key;type=private?module-path=/mnt/libmypkcs11.so.1",
        "pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.?pin-value=the-pin",
        "pkcs11:slot-description=Sun%20Metaslot",
        "pkcs11:library-manufacturer=Snake%20Oil,%20Inc.;library-description=Soft%20Token%20Library;library-version=1.23",
        "pkcs11:token=My%20token%25%20created%20by%20Joe;library-version=3;id=%01%02%03%Ba%dd%Ca%fe%04%05%06",
        "pkcs11:token=A%20name%20with%20a%20substring%20%25%3B;object=my-certificate;type=cert",
        "pkcs11:token=Name%20with%20a%20small%20A%20with%20acute:%20%C3%A1;object=my-certificate;type=cert",
        "pkcs11:token=my-token;object=my-certificate;type=cert;x-vend-aaa=value-a?x-vend-bbb=value-b",
        "pkcs11:token=demo;object=p256;id=%15%CB%7C%99%DF%86%63%4E;type=private",
        "pkcs11:token=demo;slot-id=1624307867;serial=f424785e60d0f89b",
        "pkcs11:token=%zz", "pkcs11:token=a;token=b", "pkcs11:unknown=1", "pkcs11:id=%",
    ]
    for number, uri in enumerate(uris):
        write("pkcs11-uri", f"uri-{number:02d}.txt", uri)


def age_files():
    """age files made by the age CLI for the fuzz identity (SHA-256("signet fuzz age key"),
    AgeTargets.identity), plain and armored, empty and across a chunk boundary; and key files."""
    identity = "AGE-SECRET-KEY-18EDQL7UJRYSMN2F44J9ZFZ7TEKEM05T262Z6GESJAU4MV9K4Q9ASK3RQNJ"
    recipient = "age15u9cgz40vpqdysc9epdhrqd5j6xd5lflkcnnr0ll20m7ph2h5vwq9cczxv"
    def age(data, *args):
        return subprocess.run(["age", "-r", recipient, *args], input=data, check=True, capture_output=True).stdout
    write("age-file", "empty.age", age(b""))
    write("age-file", "hello.age", age(b"hello, age\n"))
    write("age-file", "hello-armored.age", age(b"hello, age\n", "-a"))
    write("age-file", "two-recipients.age", age(b"two", "-r", "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"))
    write("age-file", "two-chunks.age", age(b"\x00" * (64 * 1024 + 100))[:8000])
    write("age-keyfile", "identity.txt", "# created: 2026-11-24T00:00:00Z\n# public key: " + recipient + "\n" + identity + "\n")
    write("age-keyfile", "recipients.txt", "# team\n" + recipient + "\n\nage1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n")
    write("age-keyfile", "crlf.txt", identity + "\r\n")


if __name__ == "__main__":
    keys()
    minisign()
    passwords()
    bundles()
    http()
    vault()
    x509()
    age_files()
    pkcs11_uris()
    attestation()
    dictionaries()
    print("seeds written under", os.path.relpath(CORPUS), file=sys.stderr)
