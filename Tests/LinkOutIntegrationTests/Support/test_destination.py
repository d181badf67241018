#!/usr/bin/env python3
"""A destination for linkout's health-check tests: a real HTTP or HTTPS server whose health can be switched.

Started by TestDestination.swift. Prints one JSON line once both listeners are bound:
    {"port": <destination port>, "control": <control port>}

The destination (127.0.0.1, port 0) answers every request according to the current mode and records it.
The control listener (plain HTTP, 127.0.0.1, port 0) is separate so it keeps working while the destination
is closed or hanging:
    GET /mode?set=healthy|status|hang|closed[&status=N][&body=BYTES]
        healthy: 200 "ok"; status: N (default 503); hang: accept, read the request, never answer;
        closed: the listening socket is closed (connections refused) until another mode reopens it on the
        same port. body: a GET's answer carries BYTES bytes, sent 64 KiB every 20 ms (for body caps).
    GET /cert?name=NAME      present another certificate (HTTPS only), named by --cert, to new connections
    GET /requests            JSON: {"requests": [{"method", "path", "userAgent", "status"}], "tlsFailures": N}
                             (status: what the destination answered, 0 for a hung request)
    GET /reset               forget the recorded requests

The process exits when its stdin closes, so a test runner that dies does not leave it behind.
"""

import argparse
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.mode = "healthy"
        self.status = 503
        self.body = 2
        self.requests = []
        self.tls_failures = 0
        self.contexts = {}
        self.context = None


STATE = State()


class Destination(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # Failed handshakes and clients that hang up are what these tests provoke: no tracebacks.
        pass

    def get_request(self):
        sock, address = super().get_request()
        with STATE.lock:
            context = STATE.context
        if context is not None:
            # The handshake happens in the handler's thread (setup), so a client that gives up on the
            # certificate cannot stall the accept loop.
            sock = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address


class DestinationHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        self.request.settimeout(30)
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                with STATE.lock:
                    STATE.tls_failures += 1
                raise
        super().setup()

    def handle(self):
        try:
            super().handle()
        except (ssl.SSLError, OSError):
            pass

    def log_message(self, *args):
        pass

    def answer(self, with_body):
        with STATE.lock:
            mode, status, body = STATE.mode, STATE.status, STATE.body
            code = 0 if mode == "hang" else 200 if mode == "healthy" else status
            STATE.requests.append({
                "method": self.command,
                "path": self.path,
                "userAgent": self.headers.get("User-Agent", ""),
                "status": code,
            })
        if mode == "hang":
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                with STATE.lock:
                    if STATE.mode != "hang":
                        break
                time.sleep(0.05)
            self.close_connection = True
            return
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(body))
        self.send_header("Connection", "close")
        if 300 <= code < 400:
            self.send_header("Location", "/elsewhere")
        self.end_headers()
        self.close_connection = True
        if with_body:
            # A large body dribbles, 64 KiB every 20 ms, so a client that reads it all takes its time.
            chunk = b"k" * 65536
            left = body
            while left > 0:
                piece = chunk[: min(left, len(chunk))]
                try:
                    self.wfile.write(piece)
                    self.wfile.flush()
                except OSError:
                    return
                left -= len(piece)
                if left > 0:
                    time.sleep(0.02)

    def do_GET(self):
        self.answer(True)

    def do_HEAD(self):
        self.answer(False)

    def do_POST(self):
        self.answer(True)


class Controller:
    def __init__(self, destination_port):
        self.port = destination_port
        self.server = None
        self.thread = None
        self.lock = threading.Lock()

    def open(self):
        with self.lock:
            if self.server is not None:
                return
            self.server = Destination(("127.0.0.1", self.port), DestinationHandler)
            self.port = self.server.server_address[1]
            self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            self.thread.start()

    def close(self):
        with self.lock:
            if self.server is None:
                return
            self.server.shutdown()
            self.server.server_close()
            self.server = None


CONTROLLER = None


class ControlHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, payload):
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        parts = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if parts.path == "/mode":
            mode = query.get("set", "healthy")
            if mode not in ("healthy", "status", "hang", "closed"):
                return self.reply(400, {"error": "unknown mode " + mode})
            with STATE.lock:
                STATE.mode = mode
                STATE.status = int(query.get("status", "503"))
                STATE.body = int(query.get("body", "2"))
            if mode == "closed":
                CONTROLLER.close()
            else:
                CONTROLLER.open()
            return self.reply(200, {"mode": mode})
        if parts.path == "/cert":
            name = query.get("name", "")
            with STATE.lock:
                if name not in STATE.contexts:
                    return self.reply(400, {"error": "no certificate " + name})
                STATE.context = STATE.contexts[name]
            return self.reply(200, {"cert": name})
        if parts.path == "/requests":
            with STATE.lock:
                payload = {"requests": list(STATE.requests), "tlsFailures": STATE.tls_failures}
            return self.reply(200, payload)
        if parts.path == "/reset":
            with STATE.lock:
                STATE.requests = []
                STATE.tls_failures = 0
            return self.reply(200, {})
        return self.reply(404, {"error": "unknown control " + parts.path})


def exit_when_stdin_closes():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


def main():
    global CONTROLLER
    # The test runner may block signals in the thread that started us, and a mask is inherited.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", nargs=3, action="append", metavar=("NAME", "CERT", "KEY"), default=[],
                        help="a certificate to present; the first is presented from the start (HTTPS)")
    arguments = parser.parse_args()

    for name, cert, key in arguments.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        STATE.contexts[name] = context
        if STATE.context is None:
            STATE.context = context

    CONTROLLER = Controller(0)
    CONTROLLER.open()
    control = ThreadingHTTPServer(("127.0.0.1", 0), ControlHandler)
    control.daemon_threads = True
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print(json.dumps({"port": CONTROLLER.port, "control": control.server_address[1]}), flush=True)
    control.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
