#!/usr/bin/env python3
"""Schemathesis over every operation of docs/api/openapi.yaml against a live `signet serve`:
an independent client that knows the API only from the document.

Each generated request is signed per RFC 9421 (signet_client.sign_request, the
http-message-signatures package) with the admin's key on /v1/admin/…, the app's elsewhere,
and carries a signed-in user's session where the operation needs one. Every answer is checked
against the document: no 5xx, a documented status, a documented content type, documented
headers, a body that matches its schema.

    python3 schemathesis_run.py --spec openapi.yaml --server https://127.0.0.1:PORT \\
        --cafile tls-certificate.pem --pin sha256/… --pin sha256/… \\
        --admin-key admin.pem --app-key app.pem [--examples 20] [--seed N]

Bounded: --examples per operation, and --deadline seconds in all. Prints one line per
operation and a JSON summary; exit 0 when no check failed, 1 when one did, 2 usage, 4 when
the server could not be set up (enrolment, sign-in).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance, response_headers_conformance, response_schema_conformance, status_code_conformance)

from signet_client import SignetClient, SigningKey, sign_request

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance]
SESSION_PATHS = {"/v1/me", "/v1/me/sessions", "/v1/sessions/current"}


@schemathesis.serializer("application/x-tar", "application/zip")
def binary(context, value) -> bytes:
    """Uploads (a tar of files, a signed bundle) are bytes: generated ones are garbage the
    server must refuse with a documented answer."""
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


class SignetAuth(requests.auth.AuthBase):
    """Signs each prepared request with the key its path calls for, adding the session token
    where the operation takes one (before signing: the signature covers it)."""

    def __init__(self, admin: SigningKey, app: SigningKey, token: str, path: str) -> None:
        self.key = None if path == "/v1/health" else admin if path.startswith("/v1/admin/") else app
        self.token = token if path in SESSION_PATHS else None

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        # What the document lists as the signature's fields is the signer's to write, not
        # the generator's.
        for name in ("Signature", "Signature-Input", "Content-Digest", "Authorization"):
            request.headers.pop(name, None)
        if self.token is not None:
            request.headers["Authorization"] = "Bearer " + self.token
        if self.key is not None:
            sign_request(request, self.key)
        return request


def set_up(client: SignetClient, admin: SigningKey, app: SigningKey) -> str:
    """Enrols the app and signs a user in; returns the session token."""
    enrolled = client.enrol_app(admin, "schemathesis", app)
    if enrolled.status_code not in (201, 409):
        raise RuntimeError(f"enrolling the app: {enrolled.status_code} {enrolled.text[:200]}")
    password = "correct horse battery staple"
    registered = client.register(app, "schemathesis@example.com", password, "Schemathesis")
    if registered.status_code not in (201, 409):
        raise RuntimeError(f"registering: {registered.status_code} {registered.text[:200]}")
    signed_in = client.sign_in(app, "schemathesis@example.com", password)
    if signed_in.status_code != 201:
        raise RuntimeError(f"signing in: {signed_in.status_code} {signed_in.text[:200]}")
    return signed_in.json()["token"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--pin", action="append", required=True)
    parser.add_argument("--admin-key", required=True)
    parser.add_argument("--app-key", required=True)
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--deadline", type=float, default=600, help="seconds for the whole run")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)

    admin, app = SigningKey.load(arguments.admin_key), SigningKey.load(arguments.app_key)
    client = SignetClient(arguments.server, arguments.cafile, arguments.pin)
    try:
        token = set_up(client, admin, app)
    except Exception as error:  # noqa: BLE001 - reported, exit 4
        print(f"schemathesis_run: the server could not be set up: {error}", file=sys.stderr)
        return 4

    schema = schemathesis.openapi.from_path(arguments.spec)
    started = time.monotonic()
    failures: list[dict] = []
    calls = 0
    operations = 0
    statuses: dict[str, int] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        if time.monotonic() - started > arguments.deadline:
            failures.append({"operation": operation.label, "failure": "not run: the deadline passed"})
            continue
        auth = SignetAuth(admin, app, token, operation.path)
        found: list[str] = []

        @seed(arguments.seed)
        @settings(max_examples=arguments.examples, deadline=None, database=None, derandomize=False,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def run(case) -> None:
            nonlocal calls
            if time.monotonic() - started > arguments.deadline:
                return
            calls += 1
            response = case.call(
                base_url=arguments.server, session=client.session, auth=auth, verify=arguments.cafile, timeout=60)
            statuses[str(response.status_code)] = statuses.get(str(response.status_code), 0) + 1
            try:
                case.validate_response(response, checks=CHECKS)
            except Exception as error:  # noqa: BLE001 - every failed check is reported
                message = f"{case.method} {case.formatted_path} → {response.status_code}: {str(error)[:600]}"
                if message not in found:
                    found.append(message)

        try:
            run()
        except Exception:  # noqa: BLE001 - a crash of the generator is a failure too
            found.append("the run stopped: " + traceback.format_exc(limit=3)[-600:])
        print(f"{operation.label}: {'ok' if not found else str(len(found)) + ' failing'}", flush=True)
        failures += [{"operation": operation.label, "failure": message} for message in found]

    print(json.dumps({"operations": operations, "calls": calls, "statuses": statuses, "failures": failures}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
