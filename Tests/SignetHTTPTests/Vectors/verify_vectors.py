#!/usr/bin/env python3
"""Mechanical verification of the RFC 9421 / RFC 9530 test-vector files in this
directory. Run:  python3 verify_vectors.py   (needs the `cryptography` package)

Checks:
  keys      - every PEM loads; each private key matches its public key file;
              EC / Ed25519 keys match the RFC's JWK coordinates; secret is 64 bytes.
  examples  - Signature-Input/Signature header values agree with the fields;
              the last signature-base line is '"@signature-params": ' + signatureInput;
              the signature base is rebuilt from the message data in the JSON;
              deterministic algorithms (hmac-sha256, ed25519, rsa-v1_5-sha256) are
              re-signed and compared byte for byte; all signatures are verified
              (rsa-pss-sha512: MGF1-SHA512, salt 64; ecdsa-p256-sha256: raw r||s).
  B.4       - every transformed message is rebuilt and verified; valid/invalid as stated.
  components- Section 2 component examples are recomputed where feasible.
  RFC 9530  - every digest is recomputed from its body.
Exit status is non-zero on any failure.
"""
import base64
import hashlib
import hmac
import json
import os
import re
import sys
import urllib.parse
import zlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

HERE = os.path.dirname(os.path.abspath(__file__))
KEYDIR = os.path.join(HERE, "rfc9421-keys")
failures = []
passes = 0


def check(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
        print("FAIL:", what)
    return cond


def b64u(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64u_int(s):
    return int.from_bytes(b64u(s), "big")


# ------------------------------------------------------------------ keys
def load_priv(name):
    with open(os.path.join(KEYDIR, name), "rb") as f:
        return serialization.load_pem_private_key(f.read(), None)


def load_pub(name):
    with open(os.path.join(KEYDIR, name), "rb") as f:
        return serialization.load_pem_public_key(f.read())


def pub_der(k):
    return k.public_bytes(serialization.Encoding.DER,
                          serialization.PublicFormat.SubjectPublicKeyInfo)


keys = {}
for kid, stem in [("test-key-rsa", "test-key-rsa"),
                  ("test-key-rsa-pss", "test-key-rsa-pss"),
                  ("test-key-ecc-p256", "test-key-ecc-p256"),
                  ("test-key-ed25519", "test-key-ed25519")]:
    priv = load_priv(stem + ".pem")
    pub = load_pub(stem + ".pub.pem")
    check(pub_der(priv.public_key()) == pub_der(pub), f"{kid}: private key matches public key file")
    keys[kid] = (priv, pub)

for kid in ("test-key-rsa", "test-key-rsa-pss"):
    check(keys[kid][1].key_size == 2048 and keys[kid][1].public_numbers().e == 65537,
          f"{kid}: 2048-bit RSA, e=65537")

# File shape: PEM labels as printed in RFC 9421 B.1.
for name, label in [("test-key-rsa.pem", "RSA PRIVATE KEY"), ("test-key-rsa.pub.pem", "RSA PUBLIC KEY"),
                    ("test-key-rsa-pss.pem", "PRIVATE KEY"), ("test-key-rsa-pss.pub.pem", "PUBLIC KEY"),
                    ("test-key-ecc-p256.pem", "EC PRIVATE KEY"), ("test-key-ecc-p256.pub.pem", "PUBLIC KEY"),
                    ("test-key-ed25519.pem", "PRIVATE KEY"), ("test-key-ed25519.pub.pem", "PUBLIC KEY")]:
    with open(os.path.join(KEYDIR, name)) as f:
        txt = f.read()
    check(txt.startswith(f"-----BEGIN {label}-----\n") and txt.endswith(f"-----END {label}-----\n")
          and all(len(l) <= 64 for l in txt.splitlines()), f"{name}: PEM framing '{label}'")
# The RSA-PSS private key is PKCS#8 with the id-RSASSA-PSS OID (1.2.840.113549.1.1.10), as printed.
with open(os.path.join(KEYDIR, "test-key-rsa-pss.pem")) as f:
    der = base64.b64decode("".join(l for l in f.read().splitlines() if not l.startswith("-----")))
check(bytes.fromhex("06092a864886f70d01010a") in der[:30], "test-key-rsa-pss.pem: id-RSASSA-PSS OID")

# JWK cross-checks (values from RFC 9421 B.1.3 / B.1.4 JWK forms).
ecn = keys["test-key-ecc-p256"][0].private_numbers()
check(ecn.private_value == b64u_int("UpuF81l-kOxbjf7T4mNSv0r5tN67Gim7rnf6EFpcYDs")
      and ecn.public_numbers.x == b64u_int("qIVYZVLCrPZHGHjP17CTW0_-D9Lfw0EkjqF7xB4FivA")
      and ecn.public_numbers.y == b64u_int("Mc4nN9LTDOBhfoUeg8Ye9WedFRhnZXZJA12Qp0zZ6F0"),
      "test-key-ecc-p256: matches JWK d/x/y")
edpriv = keys["test-key-ed25519"][0]
check(edpriv.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                           serialization.NoEncryption()) == b64u("n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU")
      and edpriv.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
      == b64u("JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"),
      "test-key-ed25519: matches JWK d/x")
# n of the two RSA keys, first and last JWK characters (B.1.1 / B.1.2) as a sanity check.
n_rsa = keys["test-key-rsa"][1].public_numbers().n
n_pss = keys["test-key-rsa-pss"][1].public_numbers().n
check(base64.urlsafe_b64encode(n_rsa.to_bytes(256, "big")).decode().rstrip("=").startswith("hAKYdtoeoy8zcAcR874L8cnZxKzAGwd7v36APp7Pv6Q2jdsPBRrwWEBnez6")
      and base64.urlsafe_b64encode(n_rsa.to_bytes(256, "big")).decode().rstrip("=").endswith("wOw76WuSSsf1D4b_vLoJ10w"),
      "test-key-rsa: n matches JWK")
check(base64.urlsafe_b64encode(n_pss.to_bytes(256, "big")).decode().rstrip("=").startswith("r4tmm3r20Wd_PbqvP1s2-QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvM")
      and base64.urlsafe_b64encode(n_pss.to_bytes(256, "big")).decode().rstrip("=").endswith("2pnDOkFV6-U9nV5oyc6XI2w"),
      "test-key-rsa-pss: n matches JWK")

with open(os.path.join(KEYDIR, "test-shared-secret.b64"), "rb") as f:
    secret_txt = f.read()
check(b"\n" not in secret_txt and b" " not in secret_txt, "test-shared-secret.b64: single line, no whitespace")
SECRET = base64.b64decode(secret_txt, validate=True)
check(len(SECRET) == 64, "test-shared-secret: 64 bytes")


# ------------------------------------------------------------------ crypto
def sign_or_verify(alg, keyid, base, sig_b64, deterministic):
    msg = base.encode("ascii")
    sig = base64.b64decode(sig_b64, validate=True)
    if alg == "hmac-sha256":
        mac = hmac.new(SECRET, msg, hashlib.sha256).digest()
        return mac == sig, "HMAC reproduced"
    priv, pub = keys[keyid]
    if alg == "ed25519":
        ok_sign = priv.sign(msg) == sig
        try:
            pub.verify(sig, msg)
            ok_ver = True
        except InvalidSignature:
            ok_ver = False
        return ok_sign and ok_ver, "Ed25519 reproduced and verified"
    if alg == "rsa-v1_5-sha256":
        ok_sign = priv.sign(msg, padding.PKCS1v15(), hashes.SHA256()) == sig
        try:
            pub.verify(sig, msg, padding.PKCS1v15(), hashes.SHA256())
            ok_ver = True
        except InvalidSignature:
            ok_ver = False
        return ok_sign and ok_ver, "RSA PKCS#1 v1.5 reproduced and verified"
    if alg == "rsa-pss-sha512":
        try:
            pub.verify(sig, msg, padding.PSS(mgf=padding.MGF1(hashes.SHA512()), salt_length=64), hashes.SHA512())
            return True, "RSA-PSS verified"
        except InvalidSignature:
            return False, "RSA-PSS verify failed"
    if alg == "ecdsa-p256-sha256":
        if len(sig) != 64:
            return False, "ECDSA signature not 64 bytes"
        der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
        try:
            pub.verify(der, msg, ec.ECDSA(hashes.SHA256()))
            return True, "ECDSA r||s verified"
        except InvalidSignature:
            return False, "ECDSA verify failed"
    raise ValueError(alg)


# ------------------------------------------------------------------ minimal SF (RFC 8941) for checks
class SF:
    """Just enough of RFC 8941 to parse/serialize the vectors' dictionaries and inner lists."""

    def __init__(self, s):
        self.s, self.i = s, 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def sp(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def key(self):
        m = re.compile(r"[a-z*][a-z0-9_\-.*]*").match(self.s, self.i)
        assert m, self.s[self.i:]
        self.i = m.end()
        return m.group(0)

    def bare(self):
        c = self.s[self.i]
        if c == '"':
            self.i += 1
            out = ""
            while True:
                c = self.s[self.i]
                self.i += 1
                if c == "\\":
                    out += self.s[self.i]
                    self.i += 1
                elif c == '"':
                    return ("str", out)
                else:
                    out += c
        if c == ":":
            j = self.s.index(":", self.i + 1)
            v = self.s[self.i + 1:j]
            self.i = j + 1
            return ("bin", base64.b64decode(v, validate=True))
        if c == "?":
            v = self.s[self.i + 1]
            self.i += 2
            return ("bool", v == "1")
        m = re.compile(r"-?[0-9]+(\.[0-9]+)?").match(self.s, self.i)
        if m:
            self.i = m.end()
            return ("num", m.group(0))
        m = re.compile(r"[A-Za-z*][A-Za-z0-9:/!#$%&'*+\-.^_`|~]*").match(self.s, self.i)
        assert m, self.s[self.i:]
        self.i = m.end()
        return ("tok", m.group(0))

    def params(self):
        ps = []
        while self.i < len(self.s) and self.s[self.i] == ";":
            self.i += 1
            self.sp()
            k = self.key()
            v = ("bool", True)
            if self.i < len(self.s) and self.s[self.i] == "=":
                self.i += 1
                v = self.bare()
            ps.append((k, v))
        return ps

    def item_or_inner(self):
        if self.s[self.i] == "(":
            self.i += 1
            items = []
            while True:
                self.sp()
                if self.s[self.i] == ")":
                    self.i += 1
                    break
                items.append((self.bare(), self.params()))
            return ("inner", items, self.params())
        b = self.bare()
        return ("item", b, self.params())

    def dictionary(self):
        out = []
        self.sp()
        while self.i < len(self.s):
            k = self.key()
            if self.i < len(self.s) and self.s[self.i] == "=":
                self.i += 1
                v = self.item_or_inner()
            else:
                v = ("item", ("bool", True), self.params())
            out.append((k, v))
            self.ws()
            if self.i >= len(self.s):
                break
            assert self.s[self.i] == ",", self.s[self.i:]
            self.i += 1
            self.ws()
        return out


def ser_bare(b):
    t, v = b
    if t == "str":
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if t == "bin":
        return ":" + base64.b64encode(v).decode() + ":"
    if t == "bool":
        return "?1" if v else "?0"
    return v


def ser_params(ps):
    out = ""
    for k, v in ps:
        out += ";" + k
        if not (v[0] == "bool" and v[1] is True):
            out += "=" + ser_bare(v)
    return out


def ser_member(m):
    if m[0] == "inner":
        return "(" + " ".join(ser_bare(b) + ser_params(p) for b, p in m[1]) + ")" + ser_params(m[2])
    return ser_bare(m[1]) + ser_params(m[2])


def ser_dict(d):
    parts = []
    for k, m in d:
        if m[0] == "item" and m[1] == ("bool", True):
            parts.append(k + ser_params(m[2]))
        else:
            parts.append(k + "=" + ser_member(m))
    return ", ".join(parts)


# ------------------------------------------------------------------ signature base builder
def field_values(headers, name):
    return [v for n, v in headers if n.lower() == name]


def canon_field(values):
    # strip leading/trailing whitespace, replace obs-fold, join with ", "
    return ", ".join(re.sub(r"\r?\n[ \t]+", " ", v).strip(" \t") for v in values)


def qp_encode(s):
    # percent-encode, space as %20 (RFC 9421 2.2.8 examples)
    return urllib.parse.quote(s, safe="")


def component_value(ident, msg, req):
    """ident: (name, params); msg: dict with method/path/query/authority/headers/status."""
    name, params = ident
    pd = dict((k, v) for k, v in params)
    ctx = req if "req" in pd else msg
    if name.startswith("@"):
        if name == "@method":
            return ctx["method"]
        if name == "@path":
            return ctx["path"]
        if name == "@query":
            return ctx["query"]
        if name == "@authority":
            return ctx["authority"].lower()
        if name == "@request-target":
            return ctx["requestTarget"]
        if name == "@status":
            return str(ctx["status"])
        if name == "@query-param":
            want = pd["name"][1]
            q = ctx["query"][1:]
            vals = [qp_encode(v) for n, v in urllib.parse.parse_qsl(q, keep_blank_values=True)
                    if qp_encode(n) == want]
            assert len(vals) == 1, (want, vals)
            return vals[0]
        raise ValueError(name)
    vals = field_values(ctx["headers"], name)
    assert vals, f"missing field {name}"
    if "key" in pd:
        d = SF(canon_field(vals)).dictionary()
        return ser_member(dict(d)[pd["key"][1]])
    if "sf" in pd:
        return ser_dict(SF(canon_field(vals)).dictionary())
    if "bs" in pd:
        return ", ".join(":" + base64.b64encode(re.sub(r"\r?\n[ \t]+", " ", v).strip(" \t").encode()).decode() + ":"
                         for v in vals)
    return canon_field(vals)


def build_base(sig_input, msg, req=None):
    inner = SF(sig_input).item_or_inner()
    assert inner[0] == "inner"
    lines = []
    for bare, params in inner[1]:
        assert bare[0] == "str"
        ident = ser_bare(bare) + ser_params(params)
        lines.append(ident + ": " + component_value((bare[1], params), msg, req))
    lines.append('"@signature-params": ' + sig_input)
    return "\n".join(lines), inner


# ------------------------------------------------------------------ RFC 9421 examples
with open(os.path.join(HERE, "rfc9421.json")) as f:
    doc = json.load(f)
REQ, RESP = doc["request"], doc["response"]

# messages themselves
check(hashlib.sha512(REQ["body"].encode()).digest()
      == base64.b64decode(field_values(REQ["headers"], "content-digest")[0][len("sha-512=:"):-1]),
      "test-request Content-Digest = sha-512(body)")
check(hashlib.sha512(RESP["body"].encode()).digest()
      == base64.b64decode(field_values(RESP["headers"], "content-digest")[0][len("sha-512=:"):-1]),
      "test-response Content-Digest = sha-512(body)")
check(int(field_values(REQ["headers"], "content-length")[0]) == len(REQ["body"].encode()),
      "test-request Content-Length")
check(int(field_values(RESP["headers"], "content-length")[0]) == len(RESP["body"].encode()),
      "test-response Content-Length")
check(REQ["requestTarget"] == REQ["path"] + REQ["query"], "test-request target = path + query")
check(field_values(REQ["headers"], "host") == [REQ["authority"]], "test-request Host = authority")
check(REQ["targetURI"].endswith("://" + REQ["authority"] + REQ["requestTarget"]), "test-request targetURI")

summary = []
for ex in doc["examples"]:
    eid, label, alg, keyid = ex["id"], ex["label"], ex["algorithm"], ex["keyid"]
    si, base, sig = ex["signatureInput"], ex["signatureBase"], ex["signature"]
    ok = True
    ok &= check(base.split("\n")[-1] == '"@signature-params": ' + si, f"{eid}: last base line is @signature-params + signatureInput")
    ok &= check(not base.endswith("\n") and "\r" not in base, f"{eid}: base has no trailing LF / CR")
    ok &= check(all(0x20 <= ord(c) < 0x7f for c in base.replace("\n", "")), f"{eid}: base is printable ASCII")
    ok &= check(dict(ex["addedHeaders"]) == {"Signature-Input": f"{label}={si}", "Signature": f"{label}=:{sig}:"},
                f"{eid}: addedHeaders consistent")
    inner = SF(si).item_or_inner()
    pmap = dict(inner[2])
    ok &= check(pmap["keyid"] == ("str", keyid), f"{eid}: keyid parameter")
    ok &= check(ser_member(inner) == si, f"{eid}: signatureInput is in strict SF serialization")
    ok &= check([ser_bare(b) + ser_params(p) for b, p in inner[1]]
                == [c if c.startswith('"') else '"' + c + '"' for c in ex["coveredComponents"]],
                f"{eid}: coveredComponents agree with signatureInput")
    if "alg" in pmap:
        ok &= check(pmap["alg"] == ("str", alg), f"{eid}: alg parameter")
    # rebuild the base from the message data in the JSON
    if ex["message"] == "request":
        msg, rq = REQ, None
    elif ex["message"] == "response":
        msg, rq = RESP, REQ
    else:
        msg = ex["messageData"]
        rq = REQ if ex.get("relatedRequest") == "request" else None
    rebuilt, _ = build_base(si, msg, rq)
    ok &= check(rebuilt == base, f"{eid}: signature base rebuilt from message data")
    good, how = sign_or_verify(alg, keyid, base, sig, ex["deterministic"])
    ok &= check(good, f"{eid}: {alg}: {how}")
    ok &= check(ex["deterministic"] == (alg in ("hmac-sha256", "ed25519", "rsa-v1_5-sha256")),
                f"{eid}: deterministic flag")
    for tm in ex.get("transformedMessages", []):
        hs = dict((n.lower(), v) for n, v in tm["headers"])
        tsi = hs["signature-input"]
        tlabel, tval = tsi.split("=", 1)
        tsig = hs["signature"].split("=", 1)[1][1:-1]
        tbase, _ = build_base(tval, tm)
        try:
            keys[keyid][1].verify(base64.b64decode(tsig), tbase.encode())
            valid = True
        except InvalidSignature:
            valid = False
        ok &= check(valid == tm["expectValid"], f"{eid}: transformed message '{tm['description']}' valid={valid}")
    if "combinedHeaders" in ex:
        ch = dict(ex["combinedHeaders"])
        d_in = SF(ch["Signature-Input"]).dictionary()
        d_sg = SF(ch["Signature"]).dictionary()
        ok &= check(ser_member(dict(d_in)[label]) == si and ser_bare(dict(d_sg)[label][1]) == ":" + sig + ":",
                    f"{eid}: combined Signature-Input/Signature contain this signature")
    summary.append((eid, alg, "reproduced+verified" if ex["deterministic"] else "verified", ok))

# ------------------------------------------------------------------ Section 2 component examples
def parse_raw(lines, scheme="https"):
    """Parse rawMessage lines into a message dict (request, response or header fragment)."""
    msg = {"headers": []}
    body_started = False
    i = 0
    if lines and re.match(r"^[A-Z]+ \S+ HTTP/1\.1$", lines[0]):
        m, t, _ = lines[0].split(" ")
        msg["method"], msg["requestTarget"] = m, t
        if t.startswith("http"):
            u = urllib.parse.urlsplit(t)
            msg["path"], msg["query"], msg["authority"] = u.path, "?" + u.query, u.netloc
        elif t.startswith("/"):
            p, _, q = t.partition("?")
            msg["path"], msg["query"] = p, "?" + q
        i = 1
    elif lines and lines[0].startswith("HTTP/1.1 "):
        msg["status"] = int(lines[0].split(" ")[1])
        i = 1
    trailers = []
    for line in lines[i:]:
        if line == "":
            body_started = True
            continue
        if body_started:
            if ": " in line and line[0].isupper() and not line.startswith("HTTP"):
                n, v = line.split(":", 1)
                trailers.append([n, v])
            continue
        if line[0] in " \t":
            n, v = msg["headers"][-1]
            msg["headers"][-1] = [n, v + "\n" + line]
        else:
            n, v = line.split(":", 1)
            msg["headers"].append([n, v])
    if "authority" not in msg:
        h = field_values(msg["headers"], "host")
        if h:
            msg["authority"] = h[0].strip()
    msg["trailers"] = trailers
    return msg


comp_checked = comp_skipped = 0
for ce in doc["componentExamples"]:
    msg = parse_raw(ce["rawMessage"])
    for line in ce["expectedLines"]:
        ident_s, value = re.match(r'^("(?:[^"\\]|\\.)*"(?:;[^:]*)?): (.*)$', line).groups()
        p = SF(ident_s)
        b = p.bare()
        params = p.params()
        name = b[1]
        pd = dict(params)
        try:
            if name == "@signature-params":
                inner = SF(value).item_or_inner()
                got = ser_member(inner)
            elif name == "@target-uri":
                got = ce["scheme"] + "://" + msg["authority"] + msg["requestTarget"]
            elif name == "@scheme":
                got = ce["scheme"]
            elif "tr" in pd:
                got = canon_field(field_values(msg["trailers"], name))
            else:
                got = component_value((name, params), msg, None)
        except Exception as e:  # noqa
            got = f"<error {e!r}>"
        check(got == value, f"component {ce['section']} {line!r} (got {got!r})")
        comp_checked += 1

# ------------------------------------------------------------------ RFC 9530
with open(os.path.join(HERE, "rfc9530.json")) as f:
    d9530 = json.load(f)


def crc32c(data):
    crc = 0xFFFFFFFF
    for x in data:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return (crc ^ 0xFFFFFFFF).to_bytes(4, "big")


def bsd_sum(data):
    s = 0
    for x in data:
        s = (s >> 1) + ((s & 1) << 15)
        s = (s + x) & 0xFFFF
    return s.to_bytes(2, "big")


def posix_cksum(data):
    crc = 0

    def step(crc, byte):
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
        return crc
    for x in data:
        crc = step(crc, x)
    n = len(data)
    while n:
        crc = step(crc, n & 0xFF)
        n >>= 8
    return ((~crc) & 0xFFFFFFFF).to_bytes(4, "big")


DIGESTS = {
    "sha-512": lambda b: hashlib.sha512(b).digest(),
    "sha-256": lambda b: hashlib.sha256(b).digest(),
    "md5": lambda b: hashlib.md5(b).digest(),
    "sha": lambda b: hashlib.sha1(b).digest(),
    "adler": lambda b: zlib.adler32(b).to_bytes(4, "big"),
    "crc32c": crc32c,
    "unixsum": bsd_sum,
    "unixcksum": posix_cksum,
}


def body_bytes(v):
    if v.get("bodyHex") is not None:
        return bytes.fromhex(v["bodyHex"].replace(" ", ""))
    return v["body"].encode("utf-8")


def brotli_uncompressed(stream):
    """Decode a Brotli stream made only of uncompressed meta-blocks (RFC 7932);
    returns None if the stream is not of that shape."""
    try:
        return _brotli_uncompressed(stream)
    except IndexError:
        return None


def _brotli_uncompressed(stream):
    bits = []
    for byte in stream:
        bits.extend((byte >> k) & 1 for k in range(8))
    pos = 0

    def rd(n):
        nonlocal pos
        v = sum(bits[pos + k] << k for k in range(n))
        pos += n
        return v
    if rd(1):
        if rd(3) == 0:
            rd(3)
    out = b""
    while pos < len(bits):
        if rd(1):  # ISLAST
            if rd(1):  # ISLASTEMPTY
                return out
            return None
        mn = rd(2)
        if mn == 3:
            return None
        mlen = rd(4 * (mn + 4)) + 1
        if not rd(1):  # ISUNCOMPRESSED
            return None
        pos = (pos + 7) // 8 * 8
        out += stream[pos // 8: pos // 8 + mlen]
        pos += 8 * mlen
    return None


n9530 = 0
for v in d9530["vectors"]:
    if v.get("bodyHexAsPrinted"):
        good = bytes.fromhex(v["bodyHex"].replace(" ", ""))
        printed = bytes.fromhex(v["bodyHexAsPrinted"].replace(" ", ""))
        check(brotli_uncompressed(good) == b'{"hello": "world"}\n',
              f"9530 {v['id']}: bodyHex is a valid Brotli stream of {{\"hello\": \"world\"}}+LF")
        check(brotli_uncompressed(printed) != b'{"hello": "world"}\n' and good[2:] == printed[2:],
              f"9530 {v['id']}: printed bytes differ only in the 2-byte Brotli header")
    body = body_bytes(v)
    alg, val = v["digestHeaderValue"].split("=", 1)
    check(alg == v["algorithm"] and val.startswith(":") and val.endswith(":"), f"9530 {v['id']}: member syntax")
    check(DIGESTS[alg](body) == base64.b64decode(val[1:-1], validate=True),
          f"9530 {v['id']}: {alg} over {len(body)}-byte body")
    n9530 += 1
for mv in d9530["multiMemberFieldValues"]:
    body = bytes.fromhex(mv["bodyHex"].replace(" ", ""))
    for k, m in SF(mv["fieldValue"]).dictionary():
        check(DIGESTS[k](body) == m[1][1], f"9530 {mv['id']}: member {k}")

# ------------------------------------------------------------------ report
print()
print("RFC 9421 examples:")
for eid, alg, how, ok in summary:
    print(f"  {eid:15s} {alg:18s} {how:20s} {'OK' if ok else 'FAILED'}")
print(f"RFC 9421 component lines checked: {comp_checked}")
print(f"RFC 9530 digests checked: {n9530} (+ multi-member field values)")
print(f"checks passed: {passes}, failed: {len(failures)}")
sys.exit(1 if failures else 0)
