#!/usr/bin/env python3
"""A lean HTTPS stand-in for Apple's External Purchase Server API, for bench/reporting.

The test suite's stand-in (Tests/LinkOutIntegrationTests/Support/apple_standin.py) checks every request
with PyJWT and jsonschema on a thread each, which costs more CPU per report than linkout does: timed
beside linkout on a small machine it would measure itself. This one is one asyncio loop, HTTP/1.1 with
keep-alive, and still checks each request cheaply:
  - the JWT: ES256 over header.claims verified with the key's public key (cryptography, OpenSSL), once
    per distinct token (a client that reuses its JWT pays one verification); alg, kid, aud, iss, bid,
    exp in the future, exp - iat <= 3600;
  - the body: JSON with requestIdentifier, externalPurchaseId and status, lineItems a list for LINE_ITEM;
  - Apple's duplicate rule: a requestIdentifier already accepted is answered 400 DuplicateValueError, and
    GET /externalPurchase/v1/reports/{id} returns an accepted report (404 otherwise).
Every answer waits --delay-ms (asyncio.sleep: any number of requests in flight). With --quota N, at most N
reports a second are accepted; beyond it 429 with Retry-After: 1.

GET /_bench/stats (on the same listener) answers {"accepted", "duplicates", "rateLimited", "refused",
"requests", "connections", "jwtVerifications", "maxInFlight"}.
Prints {"port": P} once listening; exits when stdin closes.
"""
import argparse
import asyncio
import base64
import json
import ssl
import sys
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import load_pem_public_key

REPORTS = "/externalPurchase/v1/reports"


def b64(segment):
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


class State:
    def __init__(self, args):
        self.args = args
        self.key = load_pem_public_key(open(args.public_key, "rb").read())
        self.verified = {}  # JWT -> problem ("" when good)
        self.accepted = {}  # requestIdentifier -> body text
        self.stats = dict(accepted=0, duplicates=0, rateLimited=0, refused=0, requests=0, connections=0,
                          jwtVerifications=0, maxInFlight=0)
        self.in_flight = 0
        self.second = 0
        self.this_second = 0

    def check_jwt(self, header):
        if not header.startswith("Bearer "):
            return "no bearer token"
        token = header[7:]
        cached = self.verified.get(token)
        if cached is not None:
            problem = cached
        else:
            problem = self.verify(token)
            self.stats["jwtVerifications"] += 1
            if len(self.verified) > 100_000:
                self.verified.clear()
            self.verified[token] = problem
        if not problem:
            claims = json.loads(b64(token.split(".")[1]))
            if claims["exp"] <= time.time() - 60:
                return "JWT expired"
        return problem

    def verify(self, token):
        try:
            head, body, signature = token.split(".")
            header, claims, raw = json.loads(b64(head)), json.loads(b64(body)), b64(signature)
        except (ValueError, UnicodeDecodeError):
            return "not a JWT"
        if header.get("alg") != "ES256" or header.get("kid") != self.args.key_id or len(raw) != 64:
            return "JWT header"
        if claims.get("aud") != "appstoreconnect-v1" or claims.get("iss") != self.args.issuer_id or not claims.get("bid"):
            return "JWT claims"
        if not isinstance(claims.get("iat"), int) or not isinstance(claims.get("exp"), int) or claims["exp"] - claims["iat"] > 3600:
            return "JWT life"
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        try:
            self.key.verify(der, (head + "." + body).encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return "JWT signature"
        return ""

    def answer_put(self, headers, raw):
        problem = self.check_jwt(headers.get("authorization", ""))
        if problem:
            return 401, {"errorMessage": problem}, ()
        try:
            body = json.loads(raw)
            request, token, status = body["requestIdentifier"], body["externalPurchaseId"], body["status"]
            if status == "LINE_ITEM" and not isinstance(body.get("lineItems"), list):
                raise ValueError("lineItems")
            if not (isinstance(request, str) and isinstance(token, str)):
                raise ValueError("ids")
        except (ValueError, KeyError, TypeError) as error:
            self.stats["refused"] += 1
            return 400, {"errors": [{"errorCode": 4000023, "errorMessage": str(error), "fieldName": "body"}]}, ()
        if request in self.accepted:
            self.stats["duplicates"] += 1
            return 400, {"errors": [{"errorCode": 4000001, "errorMessage": "DuplicateValueError", "fieldName": "requestIdentifier"}]}, ()
        if self.args.quota:
            second = int(time.time())
            if second != self.second:
                self.second, self.this_second = second, 0
            if self.this_second >= self.args.quota:
                self.stats["rateLimited"] += 1
                return 429, {"errorMessage": "rate limited"}, (("Retry-After", "1"),)
            self.this_second += 1
        self.accepted[request] = raw
        self.stats["accepted"] += 1
        return 200, {"requestIdentifier": request}, ()

    def answer_get(self, path, headers):
        if path == "/_bench/stats":
            return 200, self.stats, ()
        problem = self.check_jwt(headers.get("authorization", ""))
        if problem:
            return 401, {"errorMessage": problem}, ()
        request = path[len(REPORTS) + 1:]
        if path.startswith(REPORTS + "/") and request in self.accepted:
            return 200, json.loads(self.accepted[request]), ()
        return 404, {"errorMessage": "no such report"}, ()


async def serve_connection(state, reader, writer):
    state.stats["connections"] += 1
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            method, path, _ = line.decode("latin-1").split(" ", 2)
            headers = {}
            while True:
                header = await reader.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                name, _, value = header.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            state.stats["requests"] += 1
            state.in_flight += 1
            state.stats["maxInFlight"] = max(state.stats["maxInFlight"], state.in_flight)
            try:
                if path != "/_bench/stats" and state.args.delay_ms:
                    await asyncio.sleep(state.args.delay_ms / 1000)
                if method == "PUT" and path == REPORTS:
                    code, payload, extra = state.answer_put(headers, raw)
                elif method == "GET":
                    code, payload, extra = state.answer_get(path, headers)
                else:
                    code, payload, extra = 404, {"errorMessage": "no such path"}, ()
            finally:
                state.in_flight -= 1
            data = json.dumps(payload).encode()
            head = f"HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            head += "".join(f"{name}: {value}\r\n" for name, value in extra) + "\r\n"
            writer.write(head.encode() + data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ValueError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--cert-key", required=True)
    parser.add_argument("--public-key", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--issuer-id", required=True)
    parser.add_argument("--delay-ms", type=float, default=0)
    parser.add_argument("--quota", type=int, default=0)
    args = parser.parse_args()
    state = State(args)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.cert_key)
    context.set_alpn_protocols(["http/1.1"])
    server = await asyncio.start_server(lambda r, w: serve_connection(state, r, w), "127.0.0.1", 0, ssl=context, backlog=1024)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(main())
