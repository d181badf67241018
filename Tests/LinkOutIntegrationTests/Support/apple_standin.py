#!/usr/bin/env python3
"""A stand-in for Apple's External Purchase Server API, for linkout's integration tests.

Started by AppleStandIn.swift, one process per environment (production or sandbox), and by
scripts/apple-standin (--standalone), for an operator to try reporting offline: one process serving both
environments, each on its own port, printing a line per report it receives. It checks every
request with libraries nobody here wrote: PyJWT (ES256 through cryptography) for the bearer token and
jsonschema's Draft202012Validator for the body, against docs/apple/external-purchase-report.schema.json.
Prints one JSON line once both listeners are bound:
    {"port": <HTTPS port, Apple's API>, "control": <plain HTTP port, /_standin/...>}
With --standalone, instead: "listening: sandbox https://127.0.0.1:P, production https://127.0.0.1:Q,
control http://127.0.0.1:C", then a line per report PUT as it is answered:
    <environment>: <HTTP status> <status> <externalPurchaseId>: accepted | refused: <problems>

Apple's API (HTTPS, 127.0.0.1):
    PUT /externalPurchase/v1/reports                     send a report
    GET /externalPurchase/v1/reports/{requestIdentifier} read an accepted report (404 if unknown)
Checked, in this order; the first stage that fails decides the answer, and every problem found is recorded:
    1. Authorization: Bearer JWT, verified with the In-App Purchase key's public key: header alg ES256,
       kid, typ JWT; claims iss, aud "appstoreconnect-v1", iat and exp integers in seconds, exp - iat
       <= 3600, exp in the future, iat not in the future (60 s skew both ways), bid non-empty.    -> 401
    2. (PUT) Content-Type application/json, a JSON body, valid against the schema.              -> 400
    3. The JWT's bid equals the bundle id registered for the token (any bid if none was).      -> 401
    4. The token belongs to this environment (SANDBOX... on sandbox only, others on production only).
    5. Apple's rules: a requestIdentifier already accepted (DuplicateValueError); LINE_ITEM then
       NO_LINE_ITEM or UNRECOGNIZED_TOKEN (status regression); two reports for one token in flight at
       once (simultaneous submission).                                                        -> 400
Apple's 401 has no useful body; this one's says what failed, so a test log shows it. The 400 bodies have
Apple's shape {"errors": [{"errorCode", "errorMessage", "fieldName", "lineItemId"?}]}. Only 4000001
(DuplicateValueError, requestIdentifier) is taken from Apple's documentation; the other codes are MADE UP
(Apple publishes few of its numeric codes): 4000023 schema, 4000024 content type, 4000025 JSON,
4000030 wrong environment, 4000031 status regression, 4000032 simultaneous submission, 4000050 forced.

Apple's App Store Server API, on the same listener (the same hosts and key in Apple's library):
    POST /inApps/v1/notifications/history[?paginationToken=T]   Get Notification History
The JWT is checked as above (-> 401). The body is read into Apple's own model with Apple's library
(app-store-server-library's NotificationHistoryRequest, through its cattrs converter), must carry integer
startDate < endDate (Unix ms), and notificationType EXTERNAL_PURCHASE_TOKEN (-> 400 otherwise). The answer
lists, in the order they were added, the signed notifications the test added for the JWT's bid whose
signedDate is in [startDate, endDate), at most historyPageSize a page, built with the library's
NotificationHistoryResponse; paginationToken is an opaque token naming the next page of that query.

Control API (plain HTTP, 127.0.0.1; separate so it keeps working while the API hangs; tests only):
    POST /_standin/mode      {"mode": M, "count": N (default 1), "retryAfterMs": optional}
        the next N report PUTs are answered by M instead of the checks above, then back to normal:
        ok: normal; error400: 400 naming the first lineItemId, if any; duplicate: the checks run, and a
        report they accept is recorded as accepted but answered 400 DuplicateValueError (an earlier send
        that landed); unauthorized: 401; rateLimited: 429, with Retry-After = now + retryAfterMs as Unix
        milliseconds (the App Store Server API's convention) if given; serverError: 500; hang: read the
        request and never answer (60 s, or until reset; a hung report is not "in flight").
    POST /_standin/latency   {"ms": N}  every normally processed PUT holds N ms while in flight, so that
                             overlapping reports for one token can be provoked
    POST /_standin/register  {"externalPurchaseId", "bundleId"}  the token's app, checked against bid
    GET  /_standin/reports   every report PUT, in arrival order: requestIdentifier, externalPurchaseId,
                             status, body, jwtHeader, jwtClaims (as sent, unverified), answer (0: hung),
                             accepted, receivedAt (Unix ms), problems (empty when accepted)
    GET  /_standin/accepted  the accepted ones only
    POST /_standin/lookup-mode {"mode": M, "count": N (default 1), "retryAfterMs": optional}
        the next N report GETs are answered by M: ok (normal), unauthorized (401), rateLimited (429, with
        Retry-After as for PUTs), serverError (500)
    POST /_standin/tamper    {"requestIdentifier", "path": [keys and indexes], then "value": V, or
                             "valueJSON": text (parsed here, so its member order and 2990.0 survive), or
                             "remove": true; or {"requestIdentifier", "forget": true}}
        changes Apple's stored copy of an accepted report, as the GET returns it: sets or removes the member
        at path (["lineItems", 0, "taxAmount"]), or forgets the report (the GET answers 404); 400 naming the
        problem if there is no such report or path
    GET  /_standin/lookups   every report GET: requestIdentifier, answer, problems, receivedAt
    GET  /_standin/inflight  the externalPurchaseIds of the reports being processed now, so that a test can
                             send its overlapping report once the first is surely in flight
    POST /_standin/history   {"signedPayload", "bundleId", "signedDate"}  a notification Apple's history holds
    POST /_standin/history-mode {"mode": "ok" | "serverError", "count": N, "pageSize": optional}  the next N
                             history requests answered 500; pageSize (default 20, Apple's) records per page
    GET  /_standin/history-requests  every history request: query, body, bid, answer, problems, receivedAt
    POST /_standin/reset     forget everything above, back to mode ok and no latency

The process exits when its stdin closes, so a test runner that dies does not leave it behind; with
--standalone it runs until killed.
"""

import argparse
import json
import os
import re
import signal
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema
import jwt
from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.NotificationHistoryResponse import NotificationHistoryResponse
from appstoreserverlibrary.models.NotificationHistoryResponseItem import NotificationHistoryResponseItem
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_public_key

REPORTS_PATH = "/externalPurchase/v1/reports"
HISTORY_PATH = "/inApps/v1/notifications/history"
AUDIENCE = "appstoreconnect-v1"
SKEW = 60
MAX_LIFETIME = 3600
HANG_SECONDS = 60
MODES = ("ok", "error400", "duplicate", "unauthorized", "rateLimited", "serverError", "hang")
LOOKUP_MODES = ("ok", "unauthorized", "rateLimited", "serverError")


def now_ms():
    return int(time.time() * 1000)


class Config:
    standalone = False
    public_key = None
    key_id = ""
    issuer_id = ""
    validator = None
    context = None


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.mode = "ok"
        self.count = 0
        self.retry_after_ms = None
        self.latency_ms = 0
        self.bundles = {}           # externalPurchaseId -> bundle id registered by the test
        self.reports = []           # every PUT's record
        self.accepted = {}          # requestIdentifier -> accepted body
        self.line_item_tokens = set()
        self.in_flight = {}         # externalPurchaseId -> reports being processed
        self.lookups = []
        self.lookup_mode = "ok"
        self.lookup_count = 0
        self.lookup_retry_after_ms = None
        self.history = []           # {"signedPayload", "bundleId", "signedDate"} in the order added
        self.history_requests = []
        self.history_mode = "ok"
        self.history_count = 0
        self.history_page_size = 20
        # Changes on every reset, so a hung request stops hanging.
        self.generation = getattr(self, "generation", 0) + 1

    def take_mode(self):
        """The mode for the next report PUT, counted down."""
        with self.lock:
            if self.count <= 0:
                return "ok", None
            self.count -= 1
            return self.mode, self.retry_after_ms

    def take_lookup_mode(self):
        """The mode for the next report GET, counted down."""
        with self.lock:
            if self.lookup_count <= 0:
                return "ok", None
            self.lookup_count -= 1
            return self.lookup_mode, self.lookup_retry_after_ms


STATE = State()


def error(code, message, field=None, line_item=None):
    entry = {"errorCode": code, "errorMessage": message}
    if field is not None:
        entry["fieldName"] = field
    if line_item is not None:
        entry["lineItemId"] = line_item
    return entry


def field_name(path):
    """jsonschema's path as Apple-style dotted text: lineItems[0].amountTaxInclusive."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text or None


def check_jwt(authorization):
    """(problems, unverified header, unverified claims, verified claims or None)."""
    if not authorization.startswith("Bearer "):
        return ["no 'Authorization: Bearer <JWT>' header"], None, None, None
    token = authorization[len("Bearer "):].strip()
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as failure:
        return [f"JWT unreadable: {failure}"], None, None, None
    problems = []
    if header.get("alg") != "ES256":
        problems.append(f"JWT header alg is {header.get('alg')!r}, not 'ES256'")
    if header.get("kid") != Config.key_id:
        problems.append(f"JWT header kid is {header.get('kid')!r}, not the key id {Config.key_id!r}")
    if header.get("typ") != "JWT":
        problems.append(f"JWT header typ is {header.get('typ')!r}, not 'JWT'")
    verified = None
    try:
        verified = jwt.decode(
            token, Config.public_key, algorithms=["ES256"], audience=AUDIENCE, issuer=Config.issuer_id,
            leeway=SKEW, options={"require": ["iss", "aud", "iat", "exp", "bid"]},
        )
    except jwt.InvalidSignatureError:
        problems.append("JWT signature does not verify with the In-App Purchase key's public key")
    except jwt.PyJWTError as failure:
        problems.append(f"JWT rejected by PyJWT: {type(failure).__name__}: {failure}")
    # Apple's own rules, which PyJWT does not know: checked on the claims as sent, so a token with a bad
    # signature still reports them too.
    iat, exp = claims.get("iat"), claims.get("exp")
    for name, value in (("iat", iat), ("exp", exp)):
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"JWT claim {name} is {value!r}, not an integer number of seconds")
    if isinstance(iat, int) and isinstance(exp, int):
        if exp - iat > MAX_LIFETIME:
            problems.append(f"JWT lives {exp - iat} s (exp - iat), more than Apple's {MAX_LIFETIME} s")
        if iat > time.time() + SKEW:
            problems.append(f"JWT iat {iat} is in the future")
        if exp <= time.time() - SKEW:
            problems.append(f"JWT exp {exp} has passed")
    if not isinstance(claims.get("bid"), str) or not claims.get("bid"):
        problems.append(f"JWT claim bid is {claims.get('bid')!r}, not a bundle id")
    if problems:
        verified = None
    return problems, header, claims, verified


def check_bundle(claims, purchase_id):
    with STATE.lock:
        registered = STATE.bundles.get(purchase_id)
    if registered is not None and claims.get("bid") != registered:
        return [f"JWT bid {claims.get('bid')!r} is not {registered!r}, the bundle id of token {purchase_id}"]
    return []


def check_body(content_type, raw):
    """(problems, errors, parsed body or None)."""
    if content_type.split(";")[0].strip().lower() != "application/json":
        message = f"Content-Type is {content_type!r}, not application/json"
        return [message], [error(4000024, message)], None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as failure:
        message = f"body is not JSON: {failure}"
        return [message], [error(4000025, message)], None
    problems, errors = [], []
    for failure in sorted(Config.validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path))):
        for specific in closest_complaints(failure):
            path = list(specific.absolute_path)
            missing = REQUIRED.match(specific.message) if specific.validator == "required" else None
            if missing:
                path.append(missing.group(1))  # name the missing field, as Apple's fieldName would
            message = specific.message
            if specific.validator == "not":
                # The schema's only "not": its own message would repeat the whole body.
                path, message = ["lineItems"], "lineItems are allowed only with status LINE_ITEM"
            field = field_name(path)
            line_item = None
            if len(path) >= 2 and path[0] == "lineItems" and isinstance(path[1], int):
                items = body.get("lineItems")
                if isinstance(items[path[1]], dict):
                    line_item = items[path[1]].get("lineItemId")
            problems.append(f"schema: {field or '(body)'}: {message}")
            errors.append(error(4000023, message, field, line_item))
    return problems, errors, (body if not errors else None)


REQUIRED = re.compile(r"^'(.+)' is a required property$")


def closest_complaints(failure):
    """A line item matching none of oneOf's three kinds gets the complaints of the kind it missed least
    (a one-time buy with a float amount: that amount, not the subscription fields it lacks)."""
    if failure.validator != "oneOf" or not failure.context:
        return [failure]
    branches = {}
    for complaint in failure.context:
        branches.setdefault(complaint.relative_schema_path[0], []).append(complaint)
    return min(branches.values(), key=len)


def check_environment(purchase_id, environment):
    sandbox = purchase_id.startswith("SANDBOX")
    if sandbox != (environment == "sandbox"):
        message = (f"externalPurchaseId {purchase_id} belongs to "
                   f"{'sandbox' if sandbox else 'production'}, this is {environment}")
        return [message], [error(4000030, message, "externalPurchaseId")]
    return [], []


def semantic_errors(body):
    """Apple's rules that depend on what was accepted before; call with STATE.lock held."""
    request_id, purchase_id, status = body["requestIdentifier"], body["externalPurchaseId"], body["status"]
    if request_id in STATE.accepted:
        return ["requestIdentifier already accepted"], [error(4000001, "DuplicateValueError", "requestIdentifier")]
    if purchase_id in STATE.line_item_tokens and status in ("NO_LINE_ITEM", "UNRECOGNIZED_TOKEN"):
        message = f"status regression: token {purchase_id} had a LINE_ITEM report, now {status}"
        return [message], [error(4000031, "StatusRegressionError", "status")]
    return [], []


def accept(body):
    """Call with STATE.lock held."""
    STATE.accepted[body["requestIdentifier"]] = body
    if body["status"] == "LINE_ITEM":
        STATE.line_item_tokens.add(body["externalPurchaseId"])


class AppleServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, handler, environment):
        self.environment = environment  # whose tokens this listener accepts
        super().__init__(address, handler)

    def handle_error(self, request, client_address):
        # Clients that give up on a hung request hang up: no tracebacks.
        pass

    def get_request(self):
        sock, address = super().get_request()
        # The handshake happens in the handler's thread (setup), so one slow client cannot stall accept.
        return Config.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address


class JSONHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, payload, headers=()):
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return None
        return self.rfile.read(int(self.headers.get("Content-Length", "0") or "0"))


class AppleHandler(JSONHandler):
    def setup(self):
        self.request.settimeout(30)
        self.request.do_handshake()
        super().setup()

    def handle(self):
        try:
            super().handle()
        except (ssl.SSLError, OSError):
            pass

    def do_PUT(self):
        if self.path != REPORTS_PATH:
            return self.reply(404, {"errorMessage": f"no PUT {self.path}"})
        received = now_ms()
        raw = self.read_body()
        if raw is None:
            self.close_connection = True
            return self.reply(411, {"errorMessage": "chunked bodies are not supported by the stand-in"})
        record = {"requestIdentifier": None, "externalPurchaseId": None, "status": None, "body": None,
                  "jwtHeader": None, "jwtClaims": None, "answer": 0, "accepted": False,
                  "receivedAt": received, "problems": []}
        try:
            record["body"] = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            record["body"] = raw.decode("utf-8", "replace")
        if isinstance(record["body"], dict):
            for name in ("requestIdentifier", "externalPurchaseId", "status"):
                record[name] = record["body"].get(name)
        auth_problems, record["jwtHeader"], record["jwtClaims"], claims = check_jwt(
            self.headers.get("Authorization", ""))

        mode, retry_after_ms = STATE.take_mode()
        if mode not in ("ok", "duplicate"):
            return self.forced(mode, retry_after_ms, record)

        code, payload, body = self.process(auth_problems, claims, raw, record)
        if code == 200 and mode == "duplicate":
            code, payload = 400, {"errors": [error(4000001, "DuplicateValueError", "requestIdentifier")]}
            record["problems"].append("forced by mode duplicate (the report was recorded as accepted)")
        self.record(record, code)
        self.reply(code, payload)

    def record(self, record, code):
        """Keeps a report PUT's record; --standalone prints it too, a line each."""
        with STATE.lock:
            record["answer"] = code
            STATE.reports.append(record)
        if Config.standalone:
            verdict = "accepted" if record["accepted"] else "refused: " + "; ".join(record["problems"])
            print(f"{self.server.environment}: {code} {record['status']} {record['externalPurchaseId']}: {verdict}",
                  flush=True)

    def process(self, auth_problems, claims, raw, record):
        """The normal checks: (status, answer, accepted body)."""
        problems = record["problems"]
        problems += auth_problems
        if auth_problems:
            return 401, {"errorMessage": "Unauthenticated", "problems": problems}, None
        body_problems, errors, body = check_body(self.headers.get("Content-Type", ""), raw)
        problems += body_problems
        if errors:
            return 400, {"errors": errors}, None
        purchase_id = body["externalPurchaseId"]
        problems += check_bundle(claims, purchase_id)
        if problems:
            return 401, {"errorMessage": "Unauthenticated", "problems": problems}, None
        environment_problems, errors = check_environment(purchase_id, self.server.environment)
        problems += environment_problems
        if errors:
            return 400, {"errors": errors}, None

        with STATE.lock:
            overlapping = STATE.in_flight.get(purchase_id, 0) > 0
            if not overlapping:
                STATE.in_flight[purchase_id] = 1
            latency = STATE.latency_ms
        if overlapping:
            problems.append(f"simultaneous submission: another report for {purchase_id} is in flight")
            return 400, {"errors": [error(4000032, "SimultaneousSubmissionError", "externalPurchaseId")]}, None
        try:
            if latency:
                time.sleep(latency / 1000)
            with STATE.lock:
                rule_problems, errors = semantic_errors(body)
                problems += rule_problems
                if errors:
                    return 400, {"errors": errors}, None
                accept(body)
                record["accepted"] = True
                return 200, {"requestIdentifier": body["requestIdentifier"]}, body
        finally:
            with STATE.lock:
                STATE.in_flight.pop(purchase_id, None)

    def forced(self, mode, retry_after_ms, record):
        record["problems"].append(f"forced by mode {mode}")
        headers = []
        if mode == "hang":
            with STATE.lock:
                STATE.reports.append(record)
                generation = STATE.generation
            deadline = time.monotonic() + HANG_SECONDS
            while time.monotonic() < deadline:
                with STATE.lock:
                    if STATE.generation != generation:
                        break
                time.sleep(0.05)
            self.close_connection = True
            return
        if mode == "error400":
            body = record["body"] if isinstance(record["body"], dict) else {}
            items = body.get("lineItems") if isinstance(body.get("lineItems"), list) else []
            line_item = items[0].get("lineItemId") if items and isinstance(items[0], dict) else None
            field = "lineItems" if line_item is not None else "externalPurchaseId"
            code, payload = 400, {"errors": [error(4000050, "InvalidRequestError (forced by the stand-in)",
                                                   field, line_item)]}
        elif mode == "unauthorized":
            code, payload = 401, {"errorMessage": "Unauthenticated", "problems": record["problems"]}
        elif mode == "rateLimited":
            code, payload = 429, {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}
            if retry_after_ms is not None:
                headers.append(("Retry-After", str(now_ms() + int(retry_after_ms))))
        else:
            code, payload = 500, {"errorCode": 5000000, "errorMessage": "An unknown error occurred."}
        self.record(record, code)
        self.reply(code, payload, headers)

    def do_POST(self):
        path, _, query = self.path.partition("?")
        if path != HISTORY_PATH:
            return self.reply(404, {"errorMessage": f"no POST {self.path}"})
        raw = self.read_body() or b""
        record = {"query": query, "body": None, "bid": None, "answer": 0, "problems": [], "receivedAt": now_ms()}
        problems, _, claims, verified = check_jwt(self.headers.get("Authorization", ""))
        record["bid"] = (claims or {}).get("bid")
        code, payload = history_answer(problems, verified, raw, query, record)
        with STATE.lock:
            record["answer"] = code
            STATE.history_requests.append(record)
        self.reply(code, payload)

    def do_GET(self):
        prefix = REPORTS_PATH + "/"
        if not self.path.startswith(prefix) or len(self.path) == len(prefix):
            return self.reply(404, {"errorMessage": f"no GET {self.path}"})
        request_id = self.path[len(prefix):]
        lookup = {"requestIdentifier": request_id, "answer": 0, "problems": [], "receivedAt": now_ms()}
        mode, retry_after_ms = STATE.take_lookup_mode()
        if mode != "ok":
            lookup["problems"] = [f"forced by lookup mode {mode}"]
            headers = []
            if mode == "unauthorized":
                code, payload = 401, {"errorMessage": "Unauthenticated"}
            elif mode == "rateLimited":
                code, payload = 429, {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}
                if retry_after_ms is not None:
                    headers.append(("Retry-After", str(now_ms() + int(retry_after_ms))))
            else:
                code, payload = 500, {"errorCode": 5000000, "errorMessage": "An unknown error occurred."}
            lookup["answer"] = code
            with STATE.lock:
                STATE.lookups.append(lookup)
            return self.reply(code, payload, headers)
        problems, _, _, claims = check_jwt(self.headers.get("Authorization", ""))
        with STATE.lock:
            report = STATE.accepted.get(request_id)
        if not problems and report is not None:
            problems += check_bundle(claims, report["externalPurchaseId"])
        lookup["problems"] = problems
        if problems:
            code, payload = 401, {"errorMessage": "Unauthenticated", "problems": problems}
        elif report is None:
            lookup["problems"] = ["no accepted report with this requestIdentifier"]
            code, payload = 404, {"errorCode": 4040001, "errorMessage": "ReportNotFoundError"}
        else:
            # Apple documents the answer as the ExternalPurchaseReport it was sent: the stored copy, whole
            # (as tampered with, if a test did).
            code, payload = 200, report
        lookup["answer"] = code
        with STATE.lock:
            STATE.lookups.append(lookup)
        self.reply(code, payload)


class ControlHandler(JSONHandler):
    def do_GET(self):
        with STATE.lock:
            if self.path == "/_standin/reports":
                payload = list(STATE.reports)
            elif self.path == "/_standin/accepted":
                payload = [record for record in STATE.reports if record["accepted"]]
            elif self.path == "/_standin/lookups":
                payload = list(STATE.lookups)
            elif self.path == "/_standin/history-requests":
                payload = list(STATE.history_requests)
            elif self.path == "/_standin/inflight":
                payload = [{"externalPurchaseId": key} for key in STATE.in_flight]
            else:
                payload = None
            data = json.dumps(payload)  # under the lock: handlers fill records in
        if payload is None:
            return self.reply(404, {"error": f"unknown control GET {self.path}"})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data.encode())))
        self.end_headers()
        self.wfile.write(data.encode())

    def do_POST(self):
        raw = self.read_body() or b""
        try:
            request = json.loads(raw) if raw else {}
        except ValueError:
            return self.reply(400, {"error": "control body is not JSON"})
        if self.path == "/_standin/mode":
            mode = request.get("mode")
            if mode not in MODES:
                return self.reply(400, {"error": f"unknown mode {mode!r}; one of {', '.join(MODES)}"})
            with STATE.lock:
                STATE.mode, STATE.count = mode, int(request.get("count", 1))
                STATE.retry_after_ms = request.get("retryAfterMs")
            return self.reply(200, {"mode": mode, "count": STATE.count})
        if self.path == "/_standin/lookup-mode":
            mode = request.get("mode")
            if mode not in LOOKUP_MODES:
                return self.reply(400, {"error": f"unknown lookup mode {mode!r}; one of {', '.join(LOOKUP_MODES)}"})
            with STATE.lock:
                STATE.lookup_mode, STATE.lookup_count = mode, int(request.get("count", 1))
                STATE.lookup_retry_after_ms = request.get("retryAfterMs")
            return self.reply(200, {"mode": mode, "count": STATE.lookup_count})
        if self.path == "/_standin/tamper":
            problem = tamper(request)
            if problem:
                return self.reply(400, {"error": problem})
            return self.reply(200, {})
        if self.path == "/_standin/latency":
            with STATE.lock:
                STATE.latency_ms = int(request.get("ms", 0))
            return self.reply(200, {})
        if self.path == "/_standin/register":
            purchase_id, bundle_id = request.get("externalPurchaseId"), request.get("bundleId")
            if not isinstance(purchase_id, str) or not isinstance(bundle_id, str) or not bundle_id:
                return self.reply(400, {"error": "register needs externalPurchaseId and bundleId strings"})
            with STATE.lock:
                STATE.bundles[purchase_id] = bundle_id
            return self.reply(200, {})
        if self.path == "/_standin/history":
            item = {name: request.get(name) for name in ("signedPayload", "bundleId", "signedDate")}
            if not isinstance(item["signedPayload"], str) or not isinstance(item["bundleId"], str) or not isinstance(item["signedDate"], int):
                return self.reply(400, {"error": "history needs signedPayload and bundleId strings and an integer signedDate"})
            with STATE.lock:
                STATE.history.append(item)
            return self.reply(200, {})
        if self.path == "/_standin/history-mode":
            with STATE.lock:
                STATE.history_mode, STATE.history_count = request.get("mode", "ok"), int(request.get("count", 1))
                STATE.history_page_size = int(request.get("pageSize", STATE.history_page_size))
            return self.reply(200, {})
        if self.path == "/_standin/reset":
            with STATE.lock:
                STATE.reset()
            return self.reply(200, {})
        return self.reply(404, {"error": f"unknown control POST {self.path}"})


def history_answer(jwt_problems, verified, raw, query, record):
    """(status, payload) for a Get Notification History request; its problems go into record."""
    if jwt_problems or verified is None:
        record["problems"] += jwt_problems
        return 401, {"errorMessage": "Unauthenticated", "problems": jwt_problems}
    with STATE.lock:
        if STATE.history_count > 0 and STATE.history_mode == "serverError":
            STATE.history_count -= 1
            record["problems"].append("forced by history mode serverError")
            return 500, {"errorCode": 5000000, "errorMessage": "An unknown error occurred."}
    try:
        body = json.loads(raw)
        record["body"] = body
        # Apple's own model of the request: a member it does not know, or of the wrong type, fails here.
        request = _get_cattrs_converter(NotificationHistoryRequest).structure(body, NotificationHistoryRequest)
    except Exception as failure:  # the library raises cattrs' and its own errors alike
        record["problems"].append(f"not a NotificationHistoryRequest: {type(failure).__name__}: {failure}")
        return 400, {"errorCode": 4000000, "errorMessage": "Invalid request (stand-in)", "problems": record["problems"]}
    start, end = body.get("startDate"), body.get("endDate")
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (start, end)) or start >= end:
        record["problems"].append(f"startDate {start!r} and endDate {end!r} must be integer Unix ms, start before end")
    if body.get("notificationType") != "EXTERNAL_PURCHASE_TOKEN" or request.notificationType is None:
        record["problems"].append(f"notificationType is {body.get('notificationType')!r}, not EXTERNAL_PURCHASE_TOKEN")
    if record["problems"]:
        return 400, {"errorCode": 4000000, "errorMessage": "Invalid request (stand-in)", "problems": record["problems"]}
    offset = 0
    if query:
        token = dict(part.partition("=")[::2] for part in query.split("&")).get("paginationToken", "")
        try:
            named = json.loads(bytes.fromhex(token))
            offset = int(named["offset"])
            if named["query"] != [start, end, verified["bid"]]:
                raise ValueError("a paginationToken of another query")
        except (ValueError, KeyError, TypeError) as failure:
            record["problems"].append(f"paginationToken {token!r} is not one this stand-in gave: {failure}")
            return 400, {"errorCode": 4000006, "errorMessage": "Invalid pagination token (stand-in)"}
    with STATE.lock:
        matching = [item for item in STATE.history
                    if item["bundleId"] == verified["bid"] and start <= item["signedDate"] < end]
        size = STATE.history_page_size
    page = matching[offset:offset + size]
    more = offset + size < len(matching)
    token = json.dumps({"offset": offset + size, "query": [start, end, verified["bid"]]}).encode().hex() if more else None
    response = NotificationHistoryResponse(
        paginationToken=token, hasMore=more,
        notificationHistory=[NotificationHistoryResponseItem(signedPayload=item["signedPayload"], sendAttempts=[]) for item in page])
    return 200, _get_cattrs_converter(NotificationHistoryResponse).unstructure(response)


def tamper(request):
    """Changes Apple's stored copy of an accepted report (see the docstring); a problem's text, or None."""
    request_id = request.get("requestIdentifier")
    with STATE.lock:
        report = STATE.accepted.get(request_id)
        if report is None:
            return f"no accepted report {request_id!r}"
        if request.get("forget"):
            del STATE.accepted[request_id]
            return None
        path = request.get("path")
        if not isinstance(path, list) or not path:
            return "tamper needs a non-empty path list, or forget"
        copy = json.loads(json.dumps(report))  # the accepted body stays as the test's records show it
        parent = copy
        try:
            for step in path[:-1]:
                parent = parent[step]
            if request.get("remove"):
                del parent[path[-1]]
            elif "valueJSON" in request:
                parent[path[-1]] = json.loads(request["valueJSON"])
            elif "value" in request:
                parent[path[-1]] = request["value"]
            else:
                return "tamper needs value, remove or forget"
        except (KeyError, IndexError, TypeError) as failure:
            return f"no member at {path!r}: {failure!r}"
        STATE.accepted[request_id] = copy
    return None


def exit_when_stdin_closes():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


def main():
    # The test runner may block signals in the thread that started us, and a mask is inherited.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--environment", choices=("production", "sandbox", "both"), required=True,
                        help="whose tokens it accepts; both: sandbox on --port, production on --production-port")
    parser.add_argument("--port", type=int, default=0, help="Apple's HTTPS port (0: any free one)")
    parser.add_argument("--production-port", type=int, default=0, help="with --environment both")
    parser.add_argument("--standalone", action="store_true",
                        help="run until killed, not until stdin closes; print a line per report")
    parser.add_argument("--cert", nargs=2, metavar=("CERT", "KEY"), required=True,
                        help="the HTTPS certificate (from the test CA) and its key, PEM")
    parser.add_argument("--public-key", required=True, help="the In-App Purchase key's public key, PEM")
    parser.add_argument("--key-id", required=True, help="the kid the JWTs must name")
    parser.add_argument("--issuer-id", required=True, help="the iss the JWTs must carry")
    parser.add_argument("--schema", required=True, help="external-purchase-report.schema.json")
    arguments = parser.parse_args()

    Config.standalone = arguments.standalone
    if arguments.standalone:
        # Started in the background (`… &`), it must not hold its starter's descriptors: a program waiting
        # for the end of that shell's output (a test running the guide's commands) would wait for ever.
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    Config.key_id, Config.issuer_id = arguments.key_id, arguments.issuer_id
    with open(arguments.public_key, "rb") as file:
        Config.public_key = load_pem_public_key(file.read())
    if not isinstance(Config.public_key, ec.EllipticCurvePublicKey) or Config.public_key.curve.name != "secp256r1":
        sys.exit(f"{arguments.public_key} is not a P-256 public key")
    with open(arguments.schema) as file:
        schema = json.load(file)
    jsonschema.Draft202012Validator.check_schema(schema)
    Config.validator = jsonschema.Draft202012Validator(schema)
    Config.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    Config.context.load_cert_chain(*arguments.cert)

    if arguments.environment == "both":
        listeners = [("sandbox", arguments.port), ("production", arguments.production_port)]
    else:
        listeners = [(arguments.environment, arguments.port)]
    apples = [AppleServer(("127.0.0.1", port), AppleHandler, environment) for environment, port in listeners]
    control = ThreadingHTTPServer(("127.0.0.1", 0), ControlHandler)
    control.daemon_threads = True
    for apple in apples:
        threading.Thread(target=apple.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    if arguments.standalone:
        urls = ", ".join(f"{apple.environment} https://127.0.0.1:{apple.server_address[1]}" for apple in apples)
        print(f"listening: {urls}, control http://127.0.0.1:{control.server_address[1]}", flush=True)
    else:
        threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
        print(json.dumps({"port": apples[0].server_address[1], "control": control.server_address[1]}), flush=True)
    control.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
