#!/usr/bin/env python3
"""A TCP proxy between linkout and PostgreSQL that can lose a COMMIT's acknowledgement on purpose.

Usage: commit_cutting_proxy.py UPSTREAM_PORT

Prints one JSON line, {"port": P, "control": C}, then forwards every connection made to 127.0.0.1:P to
127.0.0.1:UPSTREAM_PORT, bytes both ways. On the control port, one line per request:

  arm    the next COMMIT any connection sends is forwarded to PostgreSQL; the proxy then waits for the
         server's answer (ReadyForQuery: the transaction is over, committed), does not relay it, and closes
         both sockets. The client sees its connection drop while COMMIT is on its way: it cannot know the
         batch landed. Answers "ok".
  cuts   answers how many COMMITs were cut so far.

linkout sends COMMIT as a simple query (PostgresConnection: PQsendQuery("COMMIT")), so the message is
'Q', a 4-byte length of 11, and "COMMIT\\0". Exits when its standard input closes.
"""
import json
import socket
import sys
import threading

COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"
READY_FOR_QUERY = b"Z\x00\x00\x00\x05"

lock = threading.Lock()
armed = False
cuts = 0


def close_quietly(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class Link:
    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.cutting = False
        self.closed = False
        self.closing = threading.Lock()

    def close(self):
        with self.closing:
            if self.closed:
                return
            self.closed = True
        close_quietly(self.client)
        close_quietly(self.server)

    def client_to_server(self):
        global armed
        tail = b""
        try:
            while True:
                data = self.client.recv(65536)
                if not data:
                    break
                if self.cutting:
                    continue  # nothing more reaches the server once the cut is under way
                window = tail + data
                at = window.find(COMMIT)
                take = False
                if at >= 0:
                    with lock:
                        if armed:
                            armed = False
                            take = True
                if take:
                    end = at + len(COMMIT) - len(tail)
                    self.cutting = True  # before the COMMIT leaves, so its answer is never relayed
                    self.server.sendall(data[:end])
                    continue
                self.server.sendall(data)
                tail = window[-(len(COMMIT) - 1):]
        except OSError:
            pass
        if not self.cutting:
            self.close()

    def server_to_client(self):
        global cuts
        pending = b""
        try:
            while True:
                data = self.server.recv(65536)
                if not data:
                    break
                if self.cutting:
                    pending += data
                    if READY_FOR_QUERY in pending:
                        with lock:
                            cuts += 1
                        break
                    continue
                self.client.sendall(data)
        except OSError:
            pass
        self.close()


def serve_proxy(listener, upstream_port):
    while True:
        client, _ = listener.accept()
        try:
            server = socket.create_connection(("127.0.0.1", upstream_port))
        except OSError:
            client.close()
            continue
        for sock in (client, server):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        link = Link(client, server)
        threading.Thread(target=link.client_to_server, daemon=True).start()
        threading.Thread(target=link.server_to_client, daemon=True).start()


def serve_control(listener):
    global armed
    while True:
        connection, _ = listener.accept()
        with connection:
            reader = connection.makefile("r")
            for line in reader:
                command = line.strip()
                if command == "arm":
                    with lock:
                        armed = True
                    answer = "ok"
                elif command == "cuts":
                    with lock:
                        answer = str(cuts)
                else:
                    answer = "unknown command"
                connection.sendall((answer + "\n").encode())


def listen():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    return listener


def main():
    upstream_port = int(sys.argv[1])
    proxy = listen()
    control = listen()
    threading.Thread(target=serve_proxy, args=(proxy, upstream_port), daemon=True).start()
    threading.Thread(target=serve_control, args=(control,), daemon=True).start()
    print(json.dumps({"port": proxy.getsockname()[1], "control": control.getsockname()[1]}), flush=True)
    sys.stdin.read()  # until the test closes it (or dies)


if __name__ == "__main__":
    main()
