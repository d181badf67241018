#!/usr/bin/env python3
"""h11's verdict on raw request heads, for differential tests of linkout's own HTTP/1.1 head parser.

Usage: differential_h11.py [--generate DIR] PATH...

For every file under the PATHs (files, or directories read one level deep, in name order), prints one
JSON line:

  {"file": PATH, "accepted": BOOL, "verdict": V, "detail": TEXT, ...}

  verdict "request"    h11 parsed a Request from the bytes (accepted: true); the line also has "method",
                       "target" (latin-1) and "version" as h11 read them.
          "error"      h11 raised RemoteProtocolError (accepted: false); "status" is h11's
                       error_status_hint, "detail" its message.
          "need_data"  h11 wants more bytes: the head is incomplete as far as it can tell (accepted: false).

Each file is one request as a client would send it: the head, maybe a body or a pipelined request after
it; h11 reads the first head only (h11.Connection(h11.SERVER), receive_data, next_event, with h11's
default 16 KiB limit on an incomplete head).

--generate DIR first writes the built-in hostile requests (HOSTILE below: the head-level cases of
RobustnessTests and of RequestHeadParserTests) to DIR, one file per case named after it, so that a PATH
of DIR judges them too. The same files and verdicts serve an end-to-end test: send each file to the
server and compare its answer with the verdict (the server must refuse whatever h11 refuses).

Needs h11 (0.16 was used): pip install h11.
"""
import json
import os
import sys

import h11

LINK = b"/nl?externalPurchaseToken=abc&bundleId=com.example"


SMUGGLED = b"GET /nl?x HTTP/1.1\r\nHost: x\r\n\r\n"


def request(target=LINK, method=b"GET", headers=b"Host: x\r\n", body=b""):
    return method + b" " + target + b" HTTP/1.1\r\n" + headers + b"\r\n" + body


# name -> the bytes sent. Names are file names: [a-z0-9-] only.
HOSTILE = {
    # RobustnessTests, the head-level cases.
    "encoded-slash": request(b"%2Fnl"),
    "unknown-method": request(method=b"BREW"),
    "lower-case-method": request(method=b"get"),
    "connect-elsewhere": b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
    "absolute-form-target": request(b"http://evil.example" + LINK),
    "absolute-form-user-info": request(b"http://user@evil.example" + LINK),
    "absolute-form-other-scheme": request(b"ftp://evil.example" + LINK),
    "asterisk-target": request(b"*", method=b"OPTIONS"),
    "two-spaces-after-method": b"GET  " + LINK + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "te-chunked-get": request(headers=b"Host: x\r\nTransfer-Encoding: chunked\r\n", body=b"0\r\n\r\n"),
    "te-identity": request(headers=b"Host: x\r\nTransfer-Encoding: identity\r\n"),
    "te-and-cl": request(headers=b"Host: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n", body=b"0\r\n\r\n"),
    "a-body": request(headers=b"Host: x\r\nContent-Length: 5\r\n", body=b"hello"),
    "chunked-post": request(method=b"POST", headers=b"Host: x\r\nTransfer-Encoding: chunked\r\n", body=b"5\r\nhello\r\n0\r\n\r\n"),
    "head-smuggling": request(method=b"HEAD", headers=b"Host: x\r\nContent-Length: %d\r\n" % len(SMUGGLED), body=SMUGGLED),
    "trace-with-body": b"TRACE / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd",
    "cl-twice": request(headers=b"Host: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n"),
    "cl-twice-different": request(headers=b"Host: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n"),
    "cl-negative": request(headers=b"Host: x\r\nContent-Length: -1\r\n"),
    "cl-not-a-number": request(headers=b"Host: x\r\nContent-Length: abc\r\n"),
    "cl-plus": request(headers=b"Host: x\r\nContent-Length: +1\r\n"),
    "cl-list": request(headers=b"Host: x\r\nContent-Length: 1, 1\r\n"),
    "cl-19-digits": request(headers=b"Host: x\r\nContent-Length: 1234567890123456789\r\n"),
    "host-twice": request(headers=b"Host: x\r\nHost: evil.example\r\n"),
    "control-in-value": request(headers=b"Host: x\r\nX-A: a\x01b\r\n"),
    "del-in-value": request(headers=b"Host: x\r\nX-A: a\x7fb\r\n"),
    "space-in-name": request(headers=b"Host: x\r\nX A: b\r\n"),
    "space-before-colon": request(headers=b"Host : x\r\n"),
    "line-without-colon": request(headers=b"Host: x\r\nGarbage\r\n"),
    "empty-name": request(headers=b"Host: x\r\n: b\r\n"),
    "bad-name-byte": request(headers=b"Host: x\r\nX(A): b\r\n"),
    "utf8-in-name": request(headers=b"Host: x\r\nX-\xc3\xa9: b\r\n"),
    "http-2-0": b"GET " + LINK + b" HTTP/2.0\r\nHost: x\r\n\r\n",
    "http-1-2": b"GET " + LINK + b" HTTP/1.2\r\nHost: x\r\n\r\n",
    "http-0-9": b"GET " + LINK + b"\r\n\r\n",
    "bad-version": b"GET " + LINK + b" HTTP/1.x\r\nHost: x\r\n\r\n",
    "lower-case-version": b"GET " + LINK + b" http/1.1\r\nHost: x\r\n\r\n",
    "space-after-version": b"GET " + LINK + b" HTTP/1.1 \r\nHost: x\r\n\r\n",
    "space-in-target": b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
    "tab-in-target": request(b"/nl\t?x"),
    "utf8-in-target": request("/nl?x=é".encode()),
    "invalid-utf8-in-target": request(b"/nl?x=\xff\xfe"),
    "20kb-header": request(headers=b"Host: x\r\nX-A: " + b"a" * 20_000 + b"\r\n"),
    "20kb-target": request(b"/nl?" + b"a" * 20_000),
    "3000-headers": request(headers=b"Host: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(3000))),
    "empty-request-line": b"\r\n\r\n",
    "empty-line-first": b"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
    "nul-in-value": request(headers=b"Host: x\r\nX-A: a\x00b\r\n"),
    "nul-cutting-request-line": b"GET " + LINK + b" HTTP/1.1\x00junk\r\nHost: x\r\n\r\n",
    "nul-in-host": request(headers=b"Host: x\x00.evil.example\r\n"),
    "obs-fold": request(headers=b"Host: x\r\nX-A: a\r\n b\r\n"),
    "obs-fold-tab": request(headers=b"Host: x\r\nX-A: a\r\n\tb\r\n"),
    "obs-fold-hiding-te": request(headers=b"Host: x\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n"),
    "space-before-first-header": b"GET / HTTP/1.1\r\n Host: x\r\n\r\n",
    "bare-lf": b"GET " + LINK + b" HTTP/1.1\nHost: x\n\n",
    "bare-lf-one-header": b"GET " + LINK + b" HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n",
    "bare-lf-end": b"GET " + LINK + b" HTTP/1.1\r\nHost: x\r\n\n",
    "bare-cr-in-value": request(headers=b"Host: x\r\nX-A: a\rb\r\n"),
    "bare-cr-after-request-line": b"GET / HTTP/1.1\rHost: x\r\n\r\n",
    "missing-host": b"GET " + LINK + b" HTTP/1.1\r\n\r\n",
    "missing-host-lookalike": b"GET " + LINK + b" HTTP/1.1\r\nX-Host: x\r\n\r\n",
    "host-with-slash": request(headers=b"Host: a/b\r\n"),
    "host-with-at": request(headers=b"Host: user@evil.example\r\n"),
    "host-with-space": request(headers=b"Host: a b\r\n"),
    "authorization-twice": request(headers=b"Host: x\r\nAuthorization: a\r\nAuthorization: b\r\n"),
    "user-agent-twice": request(headers=b"Host: x\r\nUser-Agent: a\r\nUser-Agent: b\r\n"),
    "content-type-twice": request(headers=b"Host: x\r\nContent-Type: a\r\nContent-Type: b\r\n"),
    "sec-purpose-twice": request(headers=b"Host: x\r\nSec-Purpose: prefetch\r\nSec-Purpose: prefetch\r\n"),
    "method-with-paren": b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
    "long-method": request(method=b"PROPFIND"),
    # Accepted by both, for contrast.
    "ok-http-1-0-no-host": b"HEAD " + LINK + b" HTTP/1.0\r\n\r\n",
    "ok-empty-host": request(headers=b"Host:\r\n"),
    "ok-obs-text-value": request(headers=b"Host: x\r\nX-A: caf\xc3\xa9\r\n"),
}


def verdict(data):
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(data)
    try:
        event = connection.next_event()
    except h11.RemoteProtocolError as error:
        return {"accepted": False, "verdict": "error", "status": error.error_status_hint, "detail": str(error)}
    if isinstance(event, h11.Request):
        return {
            "accepted": True, "verdict": "request", "detail": "",
            "method": event.method.decode("latin-1"), "target": event.target.decode("latin-1"),
            "version": event.http_version.decode("latin-1"),
        }
    if event is h11.NEED_DATA:
        return {"accepted": False, "verdict": "need_data", "detail": ""}
    return {"accepted": False, "verdict": "other", "detail": repr(event)}


def files(paths):
    for path in paths:
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                full = os.path.join(path, name)
                if os.path.isfile(full):
                    yield full
        else:
            yield path


def main(arguments):
    generated = arguments[:1] == ["--generate"]
    if generated:
        if len(arguments) < 2:
            sys.exit(__doc__)
        directory = arguments[1]
        os.makedirs(directory, exist_ok=True)
        for name, data in HOSTILE.items():
            with open(os.path.join(directory, name), "wb") as file:
                file.write(data)
        arguments = arguments[2:]
    if not arguments and not generated:
        sys.exit(__doc__)
    for path in files(arguments):
        with open(path, "rb") as file:
            data = file.read()
        print(json.dumps({"file": path, **verdict(data)}))


if __name__ == "__main__":
    main(sys.argv[1:])
