#!/usr/bin/env python3
"""An independent Python client for the Signet server, and a CLI that walks one user's story.

It shares no code with the Swift implementation: requests carries the HTTP, the
http_message_signatures package (RFC 9421) signs the requests, hashlib computes the
RFC 9530 Content-Digest, and cryptography reads keys and the server's certificate.

TLS is checked twice: the server's certificate must verify against --cafile (its
self-signed certificate file) for the host in --server, and the SHA-256 of the
SubjectPublicKeyInfo the server presents must equal one of the --pin values. The pin
is checked on every new connection right after the TLS handshake, before a single
byte of HTTP is sent.

    python3 signet_client.py --server https://127.0.0.1:PORT --cafile tls-certificate.pem \\
        --pin sha256/... --pin sha256/... \\
        story --admin-key admin.pem --app-key app.pem \\
        --email ada@example.com --password 'correct horse battery' --name 'Ada Lovelace'

The story prints one JSON line per step on standard output. Exit codes: 0 every step
gave the expected status; 1 a step did not; 2 usage error; 3 pin mismatch (nothing was
sent); 4 a key could not be read or the server could not be reached over TLS.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
import sys
from dataclasses import dataclass
from typing import Any

import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from http_message_signatures import HTTPMessageSigner, HTTPSignatureKeyResolver, algorithms
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPSConnection
from urllib3.connectionpool import HTTPSConnectionPool

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PIN, EXIT_IO = 0, 1, 2, 3, 4


# --- Fingerprints and pins --------------------------------------------------------------


def spki_fingerprint(spki_der: bytes) -> str:
    """Signet's fingerprint of a key: "sha256/" + base64(SHA-256(DER SubjectPublicKeyInfo))."""
    return "sha256/" + base64.b64encode(hashlib.sha256(spki_der).digest()).decode("ascii")


def spki_der(public_key) -> bytes:
    return public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def certificate_pin(certificate_der: bytes) -> str:
    """The pin of a DER certificate: the fingerprint of its SubjectPublicKeyInfo."""
    return spki_fingerprint(spki_der(x509.load_der_x509_certificate(certificate_der).public_key()))


class PinMismatch(Exception):
    """The server presented a key that is none of the pinned ones."""


class _PinnedHTTPSConnection(HTTPSConnection):
    """An HTTPS connection that, once the handshake (and certificate verification) is done,
    refuses a server whose public key is not pinned. Subclasses set `pins`."""

    pins: frozenset[str] = frozenset()

    def connect(self) -> None:
        super().connect()
        certificate = self.sock.getpeercert(binary_form=True) if self.sock is not None else None
        presented = certificate_pin(certificate) if certificate else "(no certificate)"
        if presented not in self.pins:
            self.close()
            raise PinMismatch(f"pin mismatch: {self.host}:{self.port} presented {presented}, pinned {', '.join(sorted(self.pins))}")


class PinningAdapter(HTTPAdapter):
    """A requests adapter whose HTTPS connections check the server's SPKI pin."""

    def __init__(self, pins: list[str], **kwargs: Any) -> None:
        connection = type("PinnedHTTPSConnection", (_PinnedHTTPSConnection,), {"pins": frozenset(pins)})
        self._pool_class = type("PinnedHTTPSConnectionPool", (HTTPSConnectionPool,), {"ConnectionCls": connection})
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {**self.poolmanager.pool_classes_by_scheme, "https": self._pool_class}


# --- Keys and signatures ------------------------------------------------------------------


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 private key and its Signet key id."""

    private_key: ed25519.Ed25519PrivateKey

    @staticmethod
    def load(path: str) -> "SigningKey":
        with open(path, "rb") as file:
            key = serialization.load_pem_private_key(file.read(), password=None)
        if not isinstance(key, ed25519.Ed25519PrivateKey):
            raise ValueError(f"{path} is not an Ed25519 private key")
        return SigningKey(key)

    @property
    def key_id(self) -> str:
        return spki_fingerprint(spki_der(self.private_key.public_key()))

    @property
    def public_key_pem(self) -> str:
        return self.private_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


class _OneKeyResolver(HTTPSignatureKeyResolver):
    def __init__(self, key: SigningKey) -> None:
        self.key = key

    def resolve_private_key(self, key_id: str):
        if key_id != self.key.key_id:
            raise KeyError(key_id)
        return self.key.private_key

    def resolve_public_key(self, key_id: str):
        return self.key.private_key.public_key() if key_id == self.key.key_id else None


def content_digest(body: bytes) -> str:
    """RFC 9530 Content-Digest with SHA-256, e.g. `sha-256=:X48E9q…:`."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


def sign_request(request: requests.PreparedRequest, key: SigningKey) -> None:
    """Signs a prepared request in place (RFC 9421): @method and @target-uri, plus
    content-digest when it has a body and authorization when it carries a token (the server
    refuses a token its signature does not cover); created, keyid, alg and a fresh nonce."""
    body = request.body
    if isinstance(body, str):
        body = body.encode("utf-8")
    components = ["@method", "@target-uri"]
    if body:
        request.headers["Content-Digest"] = content_digest(body)
        components.append("content-digest")
    if "Authorization" in request.headers:
        components.append("authorization")
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=_OneKeyResolver(key))
    signer.sign(
        request, key_id=key.key_id, nonce=secrets.token_urlsafe(16), covered_component_ids=tuple(components),
        # The digest is ours: the library only checks it against the body.
        body=body or None, use_existing_digest=bool(body))


# --- The client ---------------------------------------------------------------------------


class SignetClient:
    """Signed requests to one Signet server, over TLS verified against `cafile` and pinned."""

    def __init__(self, server: str, cafile: str, pins: list[str], timeout: float = 30) -> None:
        self.server = server.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.trust_env = False  # no proxies or CA bundles from the environment
        self.session.verify = cafile
        self.session.mount("https://", PinningAdapter(pins))

    def request(
        self, method: str, path: str, *, key: SigningKey | None = None, json_body: Any = None, bearer: str | None = None,
    ) -> requests.Response:
        """Sends `method path`, signed by `key` (unsigned without one), with a JSON body and a
        bearer token if given."""
        headers = {"Accept": "application/json"}
        data = None
        if json_body is not None:
            data = json.dumps(json_body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if bearer is not None:
            headers["Authorization"] = "Bearer " + bearer
        prepared = self.session.prepare_request(requests.Request(method, self.server + path, headers=headers, data=data))
        if key is not None:
            sign_request(prepared, key)
        return self.session.send(prepared, timeout=self.timeout, allow_redirects=False)

    def health(self) -> requests.Response:
        return self.request("GET", "/v1/health")

    def enrol_app(self, admin: SigningKey, name: str, app: SigningKey) -> requests.Response:
        return self.request("POST", "/v1/admin/apps", key=admin, json_body={"name": name, "publicKey": app.public_key_pem})

    def register(self, app: SigningKey, email: str, password: str, display_name: str) -> requests.Response:
        return self.request("POST", "/v1/users", key=app, json_body={"email": email, "password": password, "displayName": display_name})

    def sign_in(self, app: SigningKey, email: str, password: str) -> requests.Response:
        return self.request("POST", "/v1/sessions", key=app, json_body={"email": email, "password": password})

    def me(self, app: SigningKey, token: str) -> requests.Response:
        return self.request("GET", "/v1/me", key=app, bearer=token)

    def sign_out(self, app: SigningKey, token: str) -> requests.Response:
        return self.request("DELETE", "/v1/sessions/current", key=app, bearer=token)


# --- The story ----------------------------------------------------------------------------


class StepFailed(Exception):
    pass


def _body(response: requests.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text[:500]


def _redact(value: Any) -> Any:
    """Hides the session token in what is printed (its prefix stays, to show its shape)."""
    if isinstance(value, dict):
        return {k: (v[:8] + "…" if k == "token" and isinstance(v, str) else _redact(v)) for k, v in value.items()}
    return value


def step(name: str, response: requests.Response, expected: int, check=None) -> Any:
    """Prints the step's JSON line; raises StepFailed unless the status (and `check`) pass."""
    body = _body(response)
    problem = None
    if response.status_code != expected:
        problem = f"expected {expected}, got {response.status_code}"
    elif check is not None:
        problem = check(response, body)
    line = {"step": name, "request": f"{response.request.method} {response.request.path_url}",
            "status": response.status_code, "expected": expected, "ok": problem is None, "body": _redact(body)}
    if problem:
        line["error"] = problem
    print(json.dumps(line, ensure_ascii=False), flush=True)
    if problem:
        raise StepFailed(f"{name}: {problem}")
    return body


def story(client: SignetClient, admin: SigningKey, app: SigningKey, email: str, password: str, name: str, app_name: str) -> None:
    def enrolled(_, body):
        if not isinstance(body, dict) or body.get("keyId") != app.key_id:
            return f"keyId is not the app key's fingerprint {app.key_id}"
        if body.get("role") != "app" or body.get("name") != app_name:
            return "role or name differs from the enrolment"
        return None

    def session(_, body):
        if not isinstance(body, dict) or not str(body.get("token", "")).startswith("sgt_"):
            return "no session token in the answer"
        return None

    def same_user(_, body):
        if not isinstance(body, dict) or body.get("email") != email.strip().lower():
            return f"email {body.get('email') if isinstance(body, dict) else None!r} is not {email!r}"
        return None

    def bearer_challenge(response, body):
        if not isinstance(body, dict) or body.get("code") != "server.sessionEnded":
            return "not a server.sessionEnded problem document"
        if "bearer" not in response.headers.get("WWW-Authenticate", "").lower():
            return "no WWW-Authenticate: Bearer challenge"
        return None

    step("enrol-app", client.enrol_app(admin, app_name, app), 201, enrolled)
    step("register", client.register(app, email, password, name), 201, same_user)
    token = step("sign-in", client.sign_in(app, email, password), 201, session)["token"]
    step("me", client.me(app, token), 200, same_user)
    step("sign-out", client.sign_out(app, token), 204)
    step("me-after-sign-out", client.me(app, token), 401, bearer_challenge)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="An independent Python client for the Signet server.")
    parser.add_argument("--server", required=True, help="the server's URL, e.g. https://127.0.0.1:8443")
    parser.add_argument("--cafile", required=True, help="the certificate (PEM) the server's must verify against")
    parser.add_argument("--pin", action="append", required=True, help="sha256/… of an acceptable server key (repeatable)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds to wait for each answer")
    commands = parser.add_subparsers(dest="command", required=True)
    story_parser = commands.add_parser("story", help="enrol an app, register, sign in, /v1/me, sign out, /v1/me → 401")
    story_parser.add_argument("--admin-key", required=True, help="the admin's Ed25519 private key (PEM PKCS#8)")
    story_parser.add_argument("--app-key", required=True, help="the app's Ed25519 private key (PEM PKCS#8)")
    story_parser.add_argument("--app-name", default="python-client", help="the name to enrol the app under")
    story_parser.add_argument("--email", required=True)
    story_parser.add_argument("--password", required=True)
    story_parser.add_argument("--name", required=True, help="the user's display name")
    commands.add_parser("health", help="GET /v1/health (unsigned)")
    args = parser.parse_args(argv)

    try:
        client = SignetClient(args.server, args.cafile, args.pin, timeout=args.timeout)
        if args.command == "health":
            step("health", client.health(), 200)
            return EXIT_OK
        try:
            admin, app = SigningKey.load(args.admin_key), SigningKey.load(args.app_key)
        except (OSError, ValueError, TypeError) as error:
            print(f"signet_client: cannot read a key: {error}", file=sys.stderr)
            return EXIT_IO
        story(client, admin, app, args.email, args.password, args.name, args.app_name)
        return EXIT_OK
    except PinMismatch as error:
        print(f"signet_client: {error}", file=sys.stderr)
        return EXIT_PIN
    except StepFailed as error:
        print(f"signet_client: step failed: {error}", file=sys.stderr)
        return EXIT_FAILED
    except requests.RequestException as error:
        print(f"signet_client: cannot reach the server: {error}", file=sys.stderr)
        return EXIT_IO


if __name__ == "__main__":
    sys.exit(main())
