#!/usr/bin/env python3
"""The envelope section of Scripts/bench: what hostile traffic costs `signet serve`.

Against one running `signet serve --plain-http` on 127.0.0.1 (started by Scripts/bench with
an enrolled Ed25519 app, a published resource and `--trusted-proxy 127.0.0.1`), it measures:

1. server CPU per unauthenticated request, for several kinds of the most expensive requests
   that need no key (made-up labels, components, keys; bogus signatures under the app's public
   key id; a 64 KiB body): each kind sent back to back on keep-alive for a few seconds, the
   server's utime + stime read from /proc/PID/stat before and after;
2. GET /v1/health latency (fresh connections from 127.0.0.1, one every 20 ms, from a process
   of its own) with no attack, and during: a flood of the worst request of 1 (4 senders from
   127.0.0.2), 2,000 silent sockets (127.0.1.1-40), 1,000 stalled downloads of the resource
   (127.0.2.x, with the server's RSS before, while and after), and a registration flood
   (signed POST /v1/users, each from its own X-Forwarded-For address).

Every attack is bounded in count and time and ends by itself; everything stays on loopback.
Standard library only, plus cryptography and http-message-signatures (as Scripts/test installs
them). Results go to standard output as tab-separated lines that Scripts/bench turns into table
rows; progress goes to standard error.

    bench-envelope.py run --url http://127.0.0.1:PORT --pid PID --app-key app.pem --resource NAME
    bench-envelope.py probe --url URL --seconds S     (the health prober; prints JSON)
"""

from __future__ import annotations

import argparse
import base64
import collections
import hashlib
import json
import os
import re
import resource
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
HEAD_LIMIT = 16384          # the server's default --max-header-bytes
FIELD_LIMIT = 8192          # HTTPSignaturePolicy.maximumFieldBytes: the most a signature field may have
PROBE_INTERVAL = 0.02       # seconds between health probes
PROBE_TIMEOUT = 10.0        # a probe that takes longer counts as failed (at this latency)
ANSWER_TIMEOUT = 60.0       # a hang guard for every other answer


def note(message: str) -> None:
    print(f"bench: 15 envelope: {message}", file=sys.stderr, flush=True)


# --- HTTP/1.1 over plain sockets ------------------------------------------------------------


class Connection:
    """One keep-alive HTTP/1.1 connection that sends prepared bytes and reads whole answers."""

    def __init__(self, host: str, port: int, source: str | None = None, timeout: float = ANSWER_TIMEOUT) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if source:
            self.sock.bind((source, 0))
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.buffer = b""
        self.closed = False

    def close(self) -> None:
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def _read_until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            self._fill()
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    def _read_exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self._fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def exchange(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        """Sends `request` and reads its answer: status, fields (lower-case names), body. When the
        server says it closes (or does), the connection is marked closed."""
        self.sock.sendall(request)
        head = self._read_until(b"\r\n\r\n").decode("latin-1")
        lines = head.split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if fields.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self._read_until(b"\r\n").split(b";")[0], 16)
                if size == 0:
                    self._read_until(b"\r\n")
                    break
                body += self._read_exactly(size)
                self._read_exactly(2)
        else:
            body = self._read_exactly(int(fields.get("content-length", "0")))
        if fields.get("connection", "").lower() == "close":
            self.close()
        return status, fields, body


def raw_request(method: str, path: str, authority: str, fields: list[tuple[str, str]], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {authority}"]
    lines += [f"{name}: {value}" for name, value in fields]
    if body or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


# --- Signatures -------------------------------------------------------------------------------


def spki_fingerprint(public_key) -> str:
    from cryptography.hazmat.primitives import serialization
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256/" + base64.b64encode(hashlib.sha256(der).digest()).decode("ascii")


def content_digest(body: bytes) -> str:
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


class AppSigner:
    """Signs requests as the enrolled app does (RFC 9421 with http-message-signatures, the way
    Tests/SignetServerTests/Python/signet_client.py does): @method, @target-uri and, with a
    body, content-digest; created, keyid, alg and a fresh nonce."""

    def __init__(self, key_path: str, base_url: str) -> None:
        import requests  # noqa: F401  (the prepared requests the signer works on)
        from cryptography.hazmat.primitives import serialization
        from http_message_signatures import HTTPMessageSigner, HTTPSignatureKeyResolver, algorithms

        with open(key_path, "rb") as file:
            self.private_key = serialization.load_pem_private_key(file.read(), password=None)
        self.key_id = spki_fingerprint(self.private_key.public_key())
        private_key, key_id = self.private_key, self.key_id

        class Resolver(HTTPSignatureKeyResolver):
            def resolve_private_key(self, requested: str):
                if requested != key_id:
                    raise KeyError(requested)
                return private_key

            def resolve_public_key(self, requested: str):
                return private_key.public_key() if requested == key_id else None

        self.signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=Resolver())
        self.base_url = base_url
        self.lock = threading.Lock()

    def sign(self, method: str, path: str, fields: list[tuple[str, str]], body: bytes = b"") -> list[tuple[str, str]]:
        """The fields to send (the given ones, Content-Digest with a body, Signature-Input, Signature)."""
        import requests
        headers = dict(fields)
        components = ["@method", "@target-uri"]
        if body:
            headers["Content-Digest"] = content_digest(body)
            components.append("content-digest")
        prepared = requests.Request(method, self.base_url + path, headers=headers, data=body or None).prepare()
        with self.lock:
            self.signer.sign(prepared, key_id=self.key_id, nonce=secrets.token_urlsafe(16),
                             covered_component_ids=tuple(components), body=body or None, use_existing_digest=bool(body))
        keep = {"content-digest", "signature-input", "signature"} | {name.lower() for name, _ in fields}
        return [(name, value) for name, value in prepared.headers.items() if name.lower() in keep]


def bogus_ed25519_signature() -> str:
    """64 random bytes shaped like an Ed25519 signature (S below the group order), so the server
    must run the whole verification to refuse it."""
    raw = bytearray(secrets.token_bytes(64))
    raw[63] &= 0x0F
    return base64.b64encode(bytes(raw)).decode("ascii")


def short_names():
    """a, b, ..., z, a0, a1, ..., zz, a00, ...: the shortest distinct labels and field names."""
    first, rest = "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz0123456789"
    yield from first
    for a in first:
        for b in rest:
            yield a + b
    for a in first:
        for b in rest:
            for c in rest:
                yield a + b + c


def made_up_key_id() -> str:
    return "sha256/" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


# --- The unauthenticated requests ---------------------------------------------------------------


class Kinds:
    """Builders of the expensive requests that need no key. Each returns the bytes of one request
    (fresh nonces and, where a cache could help the server, fresh key ids)."""

    ASK = ("Accept-Signature", 'server=("@status")')

    def __init__(self, authority: str, app_key_id: str) -> None:
        self.authority = authority
        self.app_key_id = app_key_id

    def fit(self, request: bytes) -> bytes:
        head = request.split(b"\r\n\r\n", 1)[0]
        if len(head) + 4 > HEAD_LIMIT:
            raise ValueError(f"a request head of {len(head) + 4} bytes is over the {HEAD_LIMIT}-byte limit")
        return request

    @staticmethod
    def params(key_id: str) -> str:
        return f';created={int(time.time())};keyid="{key_id}";nonce="{secrets.token_urlsafe(16)}";alg="ed25519"'

    def health(self) -> bytes:
        return raw_request("GET", "/v1/health", self.authority, [])

    def unsigned(self) -> bytes:
        """GET /v1/me, no signature, asking for a signed answer."""
        return raw_request("GET", "/v1/me", self.authority, [self.ASK])

    def label_bomb(self) -> bytes:
        """GET /v1/me with as many made-up labels as fit: Signature-Input (`l0=()`, ...) and
        Signature (`l0=::`, ...) just under 8 KiB each, so the head is just under 16 KiB."""
        inputs, signatures = [], []
        budget = min(FIELD_LIMIT, (HEAD_LIMIT - 256) // 2) - 32
        for name in short_names():
            entry, signature = f"{name}=()", f"{name}=::"
            if len(", ".join(inputs + [entry])) > budget or len(", ".join(signatures + [signature])) > budget:
                break
            inputs.append(entry)
            signatures.append(signature)
        return self.fit(raw_request("GET", "/v1/me", self.authority, [
            self.ASK, ("Signature-Input", ", ".join(inputs)), ("Signature", ", ".join(signatures))]))

    @staticmethod
    def _components(budget: int, skip: int) -> list[str]:
        """Distinct made-up field names, quoted, filling `budget` bytes of an inner list (the
        first `skip` names left out)."""
        names, used = [], 0
        for i, name in enumerate(short_names()):
            if i < skip:
                continue
            if used + len(name) + 3 > budget:
                return names
            names.append(f'"{name}"')
            used += len(name) + 3
        return names

    def components_one(self) -> bytes:
        """One signature under the app's key id whose component list fills 8 KiB with distinct
        made-up fields (a pairwise duplicate check is n²)."""
        params = self.params(self.app_key_id)
        budget = FIELD_LIMIT - 96 - len(params)
        names = self._components(budget, 0)
        entry = f'sig1=("@method" "@target-uri" {" ".join(names)}){params}'
        return self.fit(raw_request("GET", "/v1/me", self.authority, [
            self.ASK, ("Signature-Input", entry), ("Signature", f"sig1=:{bogus_ed25519_signature()}:")]))

    def components_eight(self) -> bytes:
        """Eight signatures under the app's key id, each listing about 1 KiB of distinct components."""
        inputs, signatures = [], []
        for label in range(8):
            params = self.params(self.app_key_id)
            names = self._components(FIELD_LIMIT // 8 - 48 - len(params), label * 300)
            inputs.append(f'sig{label}=("@method" "@target-uri" {" ".join(names)}){params}')
            signatures.append(f"sig{label}=:{bogus_ed25519_signature()}:")
        return self.fit(raw_request("GET", "/v1/me", self.authority, [
            self.ASK, ("Signature-Input", ", ".join(inputs)), ("Signature", ", ".join(signatures))]))

    def _padded_eight(self, key_ids: list[str], method: str, path: str, body: bytes = b"") -> bytes:
        """Eight signatures (one per key id) that each cover @method, @target-uri (and
        content-digest with a body) plus every padding field, plainly and as ;bs, with bogus
        Ed25519 values; the padding fills the head to just under its limit, so each signature
        base is as long as it can be."""
        pads = [f"x-pad-{i}" for i in range(6)]
        covered = ["@method", "@target-uri"] + (["content-digest"] if body else [])
        listed = " ".join([f'"{c}"' for c in covered] + [f'"{p}"' for p in pads] + [f'"{p}";bs' for p in pads])
        inputs = [f"sig{i}=({listed}){self.params(key_id)}" for i, key_id in enumerate(key_ids)]
        signatures = [f"sig{i}=:{bogus_ed25519_signature()}:" for i in range(len(key_ids))]
        fields = [self.ASK, ("Signature-Input", ", ".join(inputs)), ("Signature", ", ".join(signatures))]
        if body:
            fields += [("Content-Type", "application/json"), ("Content-Digest", content_digest(body))]
        skeleton = raw_request(method, path, self.authority, fields + [(p, "") for p in pads], body)
        room = HEAD_LIMIT - 64 - len(skeleton.split(b"\r\n\r\n", 1)[0])
        value = "v" * max(0, room // len(pads))
        return self.fit(raw_request(method, path, self.authority, fields + [(p, value) for p in pads], body))

    def known_key_eight(self) -> bytes:
        """Eight signatures under the app's (public) key id with bogus values: eight Ed25519
        verifications over signature bases as long as the head allows."""
        return self._padded_eight([self.app_key_id] * 8, "GET", "/v1/me")

    def unknown_key_eight(self) -> bytes:
        """The same with eight made-up key ids (new ones every request: eight key look-ups)."""
        return self._padded_eight([made_up_key_id() for _ in range(8)], "GET", "/v1/me")

    def post_body(self) -> bytes:
        """POST /v1/sessions with a 64 KiB body (its Content-Digest right) and eight bogus
        signatures under the app's key id covering it."""
        filler = "a" * (65536 - 64)
        body = json.dumps({"email": "nobody@bench.example", "password": filler})[:65536].encode()
        return self._padded_eight([self.app_key_id] * 8, "POST", "/v1/sessions", body)

    DICTIONARY = ", ".join(f"k{i}={i}" for i in range(256))  # the most members a named field may have

    def dictionary_keys(self) -> bytes:
        """One signature under the app's key id whose 62 components each name a member (;key)
        of a 256-member dictionary field (round 3 of the attacks on #28: 5.2 ms before the field
        was parsed into a hashed map)."""
        components = " ".join(f'"x-d";key="k{255 - i}"' for i in range(62))
        entry = f'sig1=("@method" "@target-uri" {components}){self.params(self.app_key_id)}'
        return self.fit(raw_request("GET", "/v1/me", self.authority, [
            ("Signature-Input", entry), ("Signature", f"sig1=:{bogus_ed25519_signature()}:"), ("X-D", self.DICTIONARY)]))

    def dictionary_whole(self) -> bytes:
        """Eight signatures under the app's key id, each covering the whole 256-member
        dictionary field that Signet knows as one (`Example-Dict`, RFC 9651's) as a structured
        field (;sf): re-serialised for each."""
        inputs = [f'sig{i}=("@method" "@target-uri" "example-dict";sf){self.params(self.app_key_id)}' for i in range(8)]
        signatures = [f"sig{i}=:{bogus_ed25519_signature()}:" for i in range(8)]
        return self.fit(raw_request("GET", "/v1/me", self.authority, [
            ("Signature-Input", ", ".join(inputs)), ("Signature", ", ".join(signatures)), ("Example-Dict", self.DICTIONARY)]))

    def all(self) -> list[tuple[str, str, object]]:
        return [
            ("health", "GET /v1/health (reference, not an attack)", self.health),
            ("unsigned", "GET /v1/me unsigned, Accept-Signature", self.unsigned),
            ("label-bomb", "GET /v1/me, Accept-Signature, {n} made-up labels (16 KiB head)", self.label_bomb),
            ("components", "GET /v1/me, one signature listing {n} distinct components (8 KiB)", self.components_one),
            ("components-8", "GET /v1/me, 8 signatures of ~1 KiB of components each", self.components_eight),
            ("known-key-8", "GET /v1/me, 8 bogus signatures under the app's key id, bases padded to the 16 KiB head", self.known_key_eight),
            ("unknown-key-8", "GET /v1/me, 8 signatures under new made-up key ids, padded", self.unknown_key_eight),
            ("post-64k", "POST /v1/sessions, 64 KiB body, 8 bogus signatures under the app's key id", self.post_body),
            ("dict-keys", "GET /v1/me, 62 ;key components into a 256-member dictionary field", self.dictionary_keys),
            ("dict-sf-8", "GET /v1/me, 8 signatures each covering a 256-member dictionary field (;sf)", self.dictionary_whole),
        ]


def label_count(request: bytes) -> int:
    head = request.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    for line in head.split("\r\n"):
        if line.lower().startswith("signature-input:"):
            value = line.split(":", 1)[1]
            if value.count("=(") > 1:
                return value.count("=(")
            return value.count('" "') + 1
    return 0


# --- Server figures from /proc ----------------------------------------------------------------


def server_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    # Fields 14 and 15 (utime, stime) are the 12th and 13th after the command's ")".
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def server_memory_kib(pid: int) -> dict[str, int]:
    values = {}
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line.split(":")[0]] = int(line.split()[1])
    return values


def server_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def kernel_tcp_kib() -> int:
    """Memory the kernel holds in TCP buffers (all sockets), from /proc/net/sockstat, in KiB."""
    try:
        with open("/proc/net/sockstat") as file:
            for line in file:
                if line.startswith("TCP:"):
                    parts = line.split()
                    return int(parts[parts.index("mem") + 1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError):
        pass
    return -1


def socket_memory(port: int, side: str) -> tuple[int, int, int] | None:
    """For the established TCP sockets on `side` ("sport": the server's, "dport": its clients')
    of `port`: their count, the bytes queued to send (skmem w) plus received and unread (r),
    and the largest send buffer (tb), from `ss -tmn`; None without ss."""
    try:
        out = subprocess.run(["ss", "-tmnH", "state", "established", f"( {side} = :{port} )"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    count, queued, largest = 0, 0, 0
    for match in re.finditer(r"skmem:\(([^)]*)\)", out):
        values = {m.group(1): int(m.group(2)) for m in re.finditer(r"([a-z]+)(\d+)", match.group(1))}
        count += 1
        queued += values.get("w", 0) + values.get("r", 0)
        largest = max(largest, values.get("tb", 0))
    return count, queued, largest


class CPUWatch:
    """The server's CPU use over a stretch of time, as a share of one core."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.cpu, self.at = server_cpu_seconds(pid), time.monotonic()

    def percent(self) -> float:
        return 100 * (server_cpu_seconds(self.pid) - self.cpu) / max(time.monotonic() - self.at, 1e-6)


# --- 1. server CPU per request -----------------------------------------------------------------


def cpu_per_request(host: str, port: int, pid: int, build, seconds: float) -> tuple[int, float, collections.Counter, int]:
    """Sends build()'s requests back to back on keep-alive (reconnecting when the server closes)
    for `seconds`; returns the count, the server's CPU µs per request, the statuses and the
    connections used."""
    statuses: collections.Counter = collections.Counter()
    requests = [build() for _ in range(64)]  # formed before the clock starts
    connection, connections, sent = None, 0, 0
    cpu0 = server_cpu_seconds(pid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if connection is None or connection.closed:
            connection = Connection(host, port)
            connections += 1
        try:
            status, _, _ = connection.exchange(requests[sent % len(requests)])
            statuses[status] += 1
        except (ConnectionError, OSError) as error:
            statuses[f"closed ({type(error).__name__})"] += 1
            connection.close()
        sent += 1
        if sent % len(requests) == 0:
            requests = [build() for _ in range(64)]
    cpu1 = server_cpu_seconds(pid)
    if connection is not None:
        connection.close()
    return sent, (cpu1 - cpu0) * 1e6 / max(sent, 1), statuses, connections


# --- 2. health under attack ------------------------------------------------------------------


def probe_main(args: argparse.Namespace) -> int:
    """The prober: GET /v1/health on a fresh connection every 20 ms for `seconds`; prints JSON."""
    url = urllib.parse.urlsplit(args.url)
    request = raw_request("GET", "/v1/health", url.netloc, [("Connection", "close")])
    latencies, failures, statuses = [], 0, collections.Counter()
    stopped = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: stopped.set())
    print("ready", flush=True)
    end = time.monotonic() + args.seconds
    while time.monotonic() < end and not stopped.is_set():
        start = time.monotonic()
        try:
            connection = Connection(url.hostname, url.port, timeout=PROBE_TIMEOUT)
            status, _, _ = connection.exchange(request)
            connection.close()
            statuses[status] += 1
            if status != 200:
                failures += 1
        except (OSError, ConnectionError, ValueError, IndexError) as error:
            failures += 1
            statuses[type(error).__name__] += 1
        elapsed = time.monotonic() - start
        latencies.append(elapsed * 1000)
        time.sleep(max(0.0, PROBE_INTERVAL - elapsed))
    print(json.dumps({"latencies": latencies, "failures": failures, "statuses": {str(k): v for k, v in statuses.items()}}))
    return 0


class Prober:
    """The health prober in a process of its own, so the attack's threads do not delay it: it
    probes for `seconds`, or until stop()."""

    def __init__(self, url: str, seconds: float) -> None:
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "probe", "--url", url, "--seconds", str(seconds)],
                                        stdout=subprocess.PIPE, text=True)
        if self.process.stdout.readline().strip() != "ready":  # started, its signal handler in place
            raise SystemExit("bench-envelope: the health prober did not start")

    def stop(self) -> dict:
        self.process.send_signal(signal.SIGUSR1)
        return self.result()

    def result(self) -> dict:
        out, _ = self.process.communicate(timeout=600)
        return json.loads(out)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, -(-int(fraction * 1000) * len(ordered) // 1000))  # nearest rank, ceil(fraction * n)
    return ordered[min(rank, len(ordered)) - 1]


def health_line(scenario: str, result: dict, detail: str) -> str:
    latencies = result["latencies"]
    statuses = ", ".join(f"{k}: {v}" for k, v in sorted(result["statuses"].items()))
    return "\t".join(["health", scenario, f"{percentile(latencies, 0.5):.1f}", f"{percentile(latencies, 0.99):.1f}",
                      str(len(latencies)), str(result["failures"]), f"{detail}; probes answered {statuses}"])


def flood(host: str, port: int, source: str, request_for, senders: int, stop: threading.Event) -> tuple[collections.Counter, list]:
    """`senders` threads sending request_for() back to back from `source` until `stop`, each
    finishing its request in flight; returns the statuses (and the threads, joined)."""
    statuses: collections.Counter = collections.Counter()
    lock = threading.Lock()

    def send() -> None:
        connection = None
        while not stop.is_set():
            try:
                if connection is None or connection.closed:
                    connection = Connection(host, port, source=source)
                status, _, _ = connection.exchange(request_for())
                key: object = status
            except (OSError, ConnectionError, ValueError, IndexError) as error:
                key = f"error ({type(error).__name__})"
                if connection is not None:
                    connection.close()
                time.sleep(0.01)
            with lock:
                statuses[key] += 1
        if connection is not None:
            connection.close()

    threads = [threading.Thread(target=send, daemon=True) for _ in range(senders)]
    for thread in threads:
        thread.start()
    return statuses, threads


def run_main(args: argparse.Namespace) -> int:
    url = urllib.parse.urlsplit(args.url)
    host, port, authority, pid = url.hostname, url.port, url.netloc, args.pid
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(args.silent, args.downloads) + 512
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(wanted, soft)), hard))
    signer = AppSigner(args.app_key, args.url.rstrip("/"))
    kinds = Kinds(authority, signer.key_id)

    def check_alive(after: str) -> None:
        if not server_alive(pid):
            raise SystemExit(f"bench-envelope: the server (pid {pid}) is gone after {after}")

    # 1. CPU per request, each kind on its own, then the worst.
    worst = None
    for name, description, build in kinds.all():
        example = build()
        n, us, statuses, connections = cpu_per_request(host, port, pid, build, args.cpu_seconds)
        check_alive(name)
        description = description.replace("{n}", str(label_count(example)))
        answered = " ".join(f"{k}x{v}" for k, v in sorted(statuses.items(), key=lambda item: -item[1]))
        note(f"cpu {name}: {n} requests ({len(example)} bytes each), {us:.1f} µs server CPU each; answers {answered}; {connections} connections")
        print("\t".join(["cpu", name, description, str(n), f"{us:.1f}", answered, str(connections), str(len(example))]), flush=True)
        if name != "health" and (worst is None or us > worst[2]):
            worst = (name, build, us)

    # 2a. Health with nothing going on.
    note(f"health: no attack ({args.seconds:g} s)")
    watch = CPUWatch(pid)
    result = Prober(args.url, args.seconds).result()
    idle = watch.percent()  # what answering the probes costs
    print(health_line("baseline", result, f"no attack, server CPU {idle:.0f}% meanwhile"), flush=True)
    check_alive("the baseline")

    # 2b. A flood of the worst request: 4 senders from 127.0.0.2.
    note(f"health: 4 senders of the worst request ({worst[0]}) from 127.0.0.2 ({args.seconds:g} s)")
    stop = threading.Event()
    prepared = [worst[1]() for _ in range(256)]
    counter = iter(range(1 << 62))
    statuses, threads = flood(host, port, "127.0.0.2", lambda: prepared[next(counter) % len(prepared)], 4, stop)
    time.sleep(0.3)
    watch = CPUWatch(pid)
    result = Prober(args.url, args.seconds).result()
    busy = watch.percent()
    stop.set()
    for thread in threads:
        thread.join(ANSWER_TIMEOUT)
    check_alive("the label flood")
    sent = sum(statuses.values())
    answered = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=lambda item: -item[1]))
    print(health_line("label-flood", result, f"4 senders of {worst[0]} from 127.0.0.2: {sent} sent ({answered}), "
                      f"server CPU {busy:.0f}% meanwhile"), flush=True)
    time.sleep(1)

    # 2c. Silent sockets: 50 from each of 127.0.1.1-40 (2,000), not a byte sent.
    per_address = 50
    addresses = -(-args.silent // per_address)
    note(f"health: {args.silent} silent sockets from 127.0.1.1-{addresses} ({args.seconds:g} s)")
    silent, refused = [], 0
    for i in range(args.silent):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((f"127.0.1.{i // per_address + 1}", 0))
            sock.settimeout(10)
            sock.connect((host, port))
            silent.append(sock)
        except OSError:
            refused += 1
            sock.close()
    time.sleep(0.5)
    watch = CPUWatch(pid)
    result = Prober(args.url, args.seconds).result()
    busy = watch.percent()
    still_open = 0
    for sock in silent:
        try:
            sock.setblocking(False)
            still_open += 1 if sock.recv(1, socket.MSG_PEEK) else 0
        except BlockingIOError:
            still_open += 1
        except OSError:
            pass
    for sock in silent:
        sock.close()
    check_alive("the silent sockets")
    print(health_line("silent", result, f"{len(silent)} silent sockets connected from {addresses} addresses ({refused} failed), "
                      f"{still_open} still open after the probes, server CPU {busy:.0f}% meanwhile"), flush=True)
    time.sleep(2)

    # 2d. Stalled downloads: at most 100 from each of 127.0.2.x, a signed GET each, never read.
    # Health is probed from the first request on: while the server fills the sockets' buffers
    # (until every answer has begun, its CPU is back within 10 points of what the probes alone
    # cost and its sockets' queues stop growing: at most 25 s, inside the 30 s write timeout)
    # and then for `seconds` while nothing moves.
    per_address = 100
    path = f"/v1/resources/{urllib.parse.quote(args.resource)}"
    note(f"health: {args.downloads} stalled downloads of {path} from 127.0.2.x (signing them first)")
    signed = [raw_request("GET", path, authority, signer.sign("GET", path, [])) for _ in range(args.downloads)]
    before = server_memory_kib(pid)
    tcp_before = kernel_tcp_kib()
    peak = {"rss": 0, "tcp": 0}
    sampling = threading.Event()

    def sample_memory() -> None:
        while not sampling.is_set():
            try:
                peak["rss"] = max(peak["rss"], server_memory_kib(pid)["VmRSS"])
            except OSError:
                return
            peak["tcp"] = max(peak["tcp"], kernel_tcp_kib())
            time.sleep(0.1)

    sampler = threading.Thread(target=sample_memory, daemon=True)
    sampler.start()
    prober = Prober(args.url, 120)
    opened = time.monotonic()
    stalled, failed = [], 0
    for i, request in enumerate(signed):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((f"127.0.2.{i // per_address + 1}", 0))
            sock.settimeout(10)
            sock.connect((host, port))
            sock.sendall(request)
            stalled.append(sock)
        except OSError:
            failed += 1
            sock.close()
    sent = time.monotonic() - opened

    def begun() -> tuple[int, collections.Counter]:
        count, statuses = 0, collections.Counter()
        for sock in stalled:
            try:
                sock.setblocking(False)
                peeked = sock.recv(12, socket.MSG_PEEK)
                if len(peeked) == 12:
                    count += 1
                    statuses[peeked[9:12].decode("latin-1", "replace")] += 1
            except BlockingIOError:
                pass
            except OSError:
                statuses["reset"] += 1
        return count, statuses

    settled, queued = None, None
    while time.monotonic() - opened < 25:
        watch = CPUWatch(pid)
        time.sleep(1)
        busy = watch.percent()
        started, statuses = begun()
        sockets = socket_memory(port, "sport")
        steady = sockets is None or (queued is not None and abs(sockets[1] - queued) <= queued // 100)
        queued = sockets[1] if sockets else None
        if started + statuses["reset"] >= len(stalled) and busy < idle + 10 and steady:
            settled = time.monotonic() - opened
            break
    note(f"health: the downloads {'settled after %.1f s' % settled if settled else 'had not settled after 25 s'}; holding them {args.seconds:g} s")
    watch = CPUWatch(pid)
    time.sleep(args.seconds)
    busy = watch.percent()
    result = prober.stop()
    sampling.set()
    sampler.join()
    during = server_memory_kib(pid)
    server_sockets, client_sockets = socket_memory(port, "sport"), socket_memory(port, "dport")
    started, statuses = begun()
    held = time.monotonic() - opened
    for sock in stalled:
        sock.close()
    time.sleep(2)
    after = server_memory_kib(pid)
    check_alive("the stalled downloads")
    answered = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
    phase = f"settled (server CPU back to {idle:.0f}% + 10, its sockets' queues full) {settled:.1f} s after the first" if settled else "not settled after 25 s"
    print(health_line("downloads", result, f"{len(stalled)} stalled downloads from 127.0.2.x ({failed} failed to connect) sent in {sent:.1f} s, "
                      f"{started} answers begun ({answered}), {phase}; probed from the first request for {held:.0f} s; "
                      f"server CPU {busy:.0f}% in the last {args.seconds:g} s"), flush=True)
    print("\t".join(["rss", str(len(stalled)), str(before["VmRSS"]), str(max(peak["rss"], during["VmRSS"])),
                     str(during["VmHWM"]), str(after["VmRSS"]), str(started),
                     str(max(peak["tcp"], 0) - max(tcp_before, 0)) if tcp_before >= 0 else "-",
                     f"{server_sockets[1] // 1024} {server_sockets[0]} {server_sockets[2] // 1024}" if server_sockets else "-",
                     f"{client_sockets[1] // 1024} {client_sockets[0]}" if client_sockets else "-",
                     f"{settled:.1f}" if settled else "-"]), flush=True)
    time.sleep(1)

    # 2e. A registration flood: signed POST /v1/users, each request from its own
    # X-Forwarded-For address (the server trusts 127.0.0.1 as a proxy) and a new e-mail.
    note(f"health: registration flood, {args.flood_senders} senders of signed POST /v1/users, "
         f"a new X-Forwarded-For address each ({args.seconds:g} s)")
    sequence = iter(range(1 << 62))
    sequence_lock = threading.Lock()

    def registration() -> bytes:
        with sequence_lock:
            n = next(sequence)
        body = json.dumps({"email": f"flood-{n}@bench.example", "password": f"flood-password-{n}",
                           "displayName": f"Flood {n}"}).encode()
        forwarded = f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"
        fields = signer.sign("POST", "/v1/users", [("Content-Type", "application/json"), ("X-Forwarded-For", forwarded)], body)
        return raw_request("POST", "/v1/users", authority, fields, body)

    stop = threading.Event()
    statuses, threads = flood(host, port, "127.0.0.1", registration, args.flood_senders, stop)
    time.sleep(0.3)
    watch = CPUWatch(pid)
    result = Prober(args.url, args.seconds).result()
    busy = watch.percent()
    stop.set()
    drained = time.monotonic()
    for thread in threads:
        thread.join(ANSWER_TIMEOUT)
    drained = time.monotonic() - drained
    check_alive("the registration flood")
    counts = {key: statuses.get(key, 0) for key in (201, 429, 503)}
    others = {k: v for k, v in statuses.items() if k not in counts}
    other_text = ", ".join(f"{k}: {v}" for k, v in others.items()) or "none"
    print(health_line("registrations", result, f"{args.flood_senders} senders of signed POST /v1/users, a new X-Forwarded-For "
                      f"each: 201: {counts[201]}, 429: {counts[429]}, 503: {counts[503]}, other: {other_text}; "
                      f"server CPU {busy:.0f}% meanwhile"), flush=True)
    print("\t".join(["flood", str(args.flood_senders), str(counts[201]), str(counts[429]), str(counts[503]),
                     other_text, f"{drained:.1f}"]), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run")
    run.add_argument("--url", required=True, help="http://127.0.0.1:PORT of a signet serve --plain-http")
    run.add_argument("--pid", type=int, required=True, help="the server's process id (for /proc)")
    run.add_argument("--app-key", required=True, help="the enrolled app's Ed25519 private key (PEM)")
    run.add_argument("--resource", required=True, help="the name of a published resource")
    run.add_argument("--seconds", type=float, default=5, help="health sampling per attack")
    run.add_argument("--cpu-seconds", type=float, default=2, help="sending time per kind of request")
    run.add_argument("--silent", type=int, default=2000)
    run.add_argument("--downloads", type=int, default=1000)
    run.add_argument("--flood-senders", type=int, default=48)
    probe = commands.add_parser("probe")
    probe.add_argument("--url", required=True)
    probe.add_argument("--seconds", type=float, required=True)
    args = parser.parse_args()
    return run_main(args) if args.command == "run" else probe_main(args)


if __name__ == "__main__":
    sys.exit(main())
