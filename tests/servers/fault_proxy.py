#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for the object-storage tests.

Sits between the client and a server on 127.0.0.1 and forwards each request
unchanged (the Host header too, so SigV4 signatures still verify), one
request per connection. Faults are queued over its control API and hit the
next matching requests:

  POST /__fault__   {"mode": M, "method": "GET", "match": "substring", "count": N, "seconds": S}
  GET  /__stats__   {"GET": n, "PUT": n, ..., "paths": [...]}   requests forwarded or faulted
  POST /__reset__   clears faults and counts

Modes: cut (send the head and half the body, then close), slowdown (503
SlowDown without forwarding), error500, stall (send the head and a few bytes,
then wait S seconds before closing), drop (read half the request body, then
close without an answer), hang (read half the request body, then wait S
seconds before closing: an upload in flight when its client is killed),
addkey (forward, then add an object named "key" (its "size": 5 unless given)
to the LIST answer: a bucket that lies about its names).

Usage: fault_proxy.py UPSTREAM_PORT. Prints "PORT <n>" once it listens and
exits when its stdin closes.
"""
import json
import socket
import socketserver
import sys
import threading
import time

UPSTREAM = ("127.0.0.1", int(sys.argv[1]))
lock = threading.Lock()
faults = []
stats = {"paths": []}


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def header(head, name):
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == name:
            return v.strip()
    return None


def take_fault(method, path):
    with lock:
        for f in faults:
            if f["count"] > 0 and f.get("method", method) == method and f.get("match", "") in path:
                f["count"] -= 1
                return f
    return None


def xml_error(status, reason, code):
    body = ('<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected by the test proxy'
            '</Message></Error>' % code).encode()
    return (("HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
             % (status, reason, len(body))).encode() + body)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        head, rest = read_head(sock)
        if head is None:
            return
        method, path = head.split(" ")[0], head.split(" ")[1]
        length = int(header(head, "content-length") or 0)
        if path.startswith("/__"):
            body = rest
            while len(body) < length:
                body += sock.recv(65536)
            self.control(sock, method, path, body)
            return
        fault = take_fault(method, path)
        with lock:
            stats[method] = stats.get(method, 0) + 1
            stats["paths"].append(method + " " + path)
        if fault and fault["mode"] in ("drop", "hang"):
            want = length // 2
            while len(rest) < want:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
            if fault["mode"] == "hang":
                time.sleep(float(fault.get("seconds", 5)))
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if fault and fault["mode"] == "slowdown":
            self.drain(sock, rest, length)
            sock.sendall(xml_error(503, "Slow Down", "SlowDown"))
            return
        if fault and fault["mode"] == "error500":
            self.drain(sock, rest, length)
            sock.sendall(xml_error(500, "Internal Server Error", "InternalError"))
            return
        # Forward with "Connection: close" (not a signed header) and read the
        # whole answer back.
        lines = [l for l in head.split("\r\n") if not l.lower().startswith("connection:")]
        up = socket.create_connection(UPSTREAM)
        up.sendall(("\r\n".join(lines) + "\r\nConnection: close\r\n\r\n").encode("latin-1") + rest)
        sent = len(rest)
        while sent < length:
            chunk = sock.recv(min(65536, length - sent))
            if not chunk:
                up.close()
                return
            up.sendall(chunk)
            sent += len(chunk)
        answer = b""
        while True:
            chunk = up.recv(1 << 20)
            if not chunk:
                break
            answer += chunk
        up.close()
        rhead, _, rbody = answer.partition(b"\r\n\r\n")
        rlines = [l for l in rhead.decode("latin-1").split("\r\n") if not l.lower().startswith("connection:")]
        rhead = ("\r\n".join(rlines) + "\r\nConnection: close\r\n\r\n").encode("latin-1")
        if fault and fault["mode"] == "addkey":
            key = fault["key"].replace("&", "&amp;").replace("<", "&lt;").encode()
            extra = (b"<Contents><Key>" + key + b"</Key><Size>%d</Size><ETag>&quot;0&quot;</ETag></Contents>"
                     % int(fault.get("size", 5)))
            rbody = rbody.replace(b"</ListBucketResult>", extra + b"</ListBucketResult>")
            rlines = [l for l in rhead.decode("latin-1").split("\r\n")
                      if l and not l.lower().startswith(("content-length:", "connection:"))]
            rhead = ("\r\n".join(rlines) + "\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                     % len(rbody)).encode("latin-1")
        if fault and fault["mode"] == "cut":
            sock.sendall(rhead + rbody[: len(rbody) // 2])
            sock.shutdown(socket.SHUT_RDWR)
            return
        if fault and fault["mode"] == "stall":
            sock.sendall(rhead + rbody[: min(16, len(rbody) // 2)])
            time.sleep(float(fault.get("seconds", 5)))
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        sock.sendall(rhead + rbody)

    def drain(self, sock, rest, length):
        got = len(rest)
        while got < length:
            chunk = sock.recv(65536)
            if not chunk:
                return
            got += len(chunk)

    def control(self, sock, method, path, body):
        global faults, stats
        with lock:
            if path == "/__fault__":
                f = json.loads(body or b"{}")
                f.setdefault("count", 1)
                faults.append(f)
                out = b"{}"
            elif path == "/__reset__":
                faults = []
                stats = {"paths": []}
                out = b"{}"
            else:
                out = json.dumps(stats).encode()
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % len(out) + out)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdout.write("PORT %d\n" % server.server_address[1])
    sys.stdout.flush()
    sys.stdin.read()  # until the test closes our stdin
    server.shutdown()


if __name__ == "__main__":
    main()
