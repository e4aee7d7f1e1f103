#!/usr/bin/env python3
"""A small S3 look-alike that lies when told to, for the hostile-server tests.

Keeps objects in memory and answers path-style S3 requests on 127.0.0.1
(no signature check): PUT /BUCKET/KEY, GET (with Range: bytes=A-B, A-),
HEAD, and LIST (GET /BUCKET?list-type=2&prefix=P&continuation-token=T,
1000 keys a page). Lies are scripted over its control API and hit the next
matching requests (method and a substring of the path):

  POST /__lie__    {"lie": L, "method": "GET", "match": "substring", "count": N, ...parameters}
  GET  /__stats__  {"GET": n, "HEAD": n, ..., "paths": [...]}
  POST /__reset__  clears lies, counts and objects
  POST /__fill__   {"prefix": "bucket/key", "first": F, "count": N, "body": B}: puts the N objects
                   prefix+str(F) .. prefix+str(F+N-1), each holding B, in one request

Lies:
  list-loop      LIST says IsTruncated with the same NextContinuationToken forever,
                 "keys" made-up keys a page under the prefix (default 1000); with "fresh": true
                 a new token (and new keys) every page
  list-outside   LIST adds the keys in "keys" (a list) to the first page, whatever the prefix
  list-huge      LIST pads its page with a comment of "bytes" bytes
  drip           the answer's body at "rate" bytes a second (chunks of "chunk", default 256)
  long-length    Content-Length says "extra" more bytes than the body; the connection is then closed
  short-length   Content-Length says "extra" fewer bytes than the body sent (the rest follows on the
                 kept-alive connection, where the next answer should be)
  redirect       302 to "location" (no body)
  etag-changes   a new ETag on every answer (the bytes unchanged)
  status         HTTP "status" (default 403) with an S3 error document of "code"

Usage: lying_s3.py. Prints "PORT <n>" once it listens and exits when its stdin closes.
"""
import http.server
import json
import re
import socketserver
import sys
import threading
import time
import zlib
from urllib.parse import parse_qs, unquote, urlsplit

lock = threading.Lock()
objects = {}  # "bucket/key" -> bytes
lies = []
stats = {"paths": []}
etag_counter = [0]


def take_lie(method, path):
    with lock:
        for lie in lies:
            if lie["count"] > 0 and lie.get("method", method) == method and lie.get("match", "") in path:
                lie["count"] -= 1
                return lie
    return None


def xml_escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("lying_s3: " + (fmt % args) + "\n")

    def send(self, status, body=b"", headers=None, length=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def error_doc(self, status, code):
        body = ('<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>said by the lying test server'
                '</Message></Error>' % code).encode()
        self.send(status, body, {"Content-Type": "application/xml"})

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_POST(self):
        body = self.read_body()
        global lies, stats
        with lock:
            if self.path == "/__lie__":
                lie = json.loads(body or b"{}")
                lie.setdefault("count", 1)
                lies.append(lie)
            elif self.path == "/__fill__":
                fill = json.loads(body)
                for i in range(fill["first"], fill["first"] + fill["count"]):
                    objects[fill["prefix"] + str(i)] = fill["body"].encode()
            elif self.path == "/__reset__":
                lies = []
                stats = {"paths": []}
                objects.clear()
        self.send(200, b"{}", {"Content-Type": "application/json"})

    def do_PUT(self):
        body = self.read_body()
        key = unquote(urlsplit(self.path).path.lstrip("/"))
        with lock:
            objects[key] = body
        self.send(200, b"", {"ETag": '"%08x"' % zlib.crc32(body)})

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path == "/__stats__":
            with lock:
                out = json.dumps(stats).encode()
            self.send(200, out, {"Content-Type": "application/json"})
            return
        with lock:
            stats[self.command] = stats.get(self.command, 0) + 1
            stats["paths"].append(self.command + " " + self.path)
        lie = take_lie(self.command, self.path)
        kind = lie["lie"] if lie else ""
        if kind == "status":
            self.error_doc(int(lie.get("status", 403)), lie.get("code", "AccessDenied"))
            return
        if kind == "redirect":
            self.send(302, b"", {"Location": lie.get("location", "http://127.0.0.1:9/elsewhere")})
            return
        url = urlsplit(self.path)
        path = unquote(url.path.lstrip("/"))
        query = parse_qs(url.query, keep_blank_values=True)
        if "list-type" in query:
            self.list(path, query, lie)
            return
        with lock:
            data = objects.get(path)
        if data is None:
            self.error_doc(404, "NoSuchKey")
            return
        etag = "%08x" % zlib.crc32(data)
        if kind == "etag-changes":
            with lock:
                etag_counter[0] += 1
                etag += "-%d" % etag_counter[0]
        headers = {"ETag": '"%s"' % etag, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
        status, body = 200, data
        m = re.match(r"bytes=(\d+)-(\d*)$", self.headers.get("Range") or "")
        if m:
            begin = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
            if begin >= len(data):
                self.error_doc(416, "InvalidRange")
                return
            status, body = 206, data[begin:end + 1]
            headers["Content-Range"] = "bytes %d-%d/%d" % (begin, end, len(data))
        self.answer(status, body, headers, lie)

    def answer(self, status, body, headers, lie):
        kind = lie["lie"] if lie else ""
        if kind == "long-length":
            self.send(status, body, headers, length=len(body) + int(lie.get("extra", 100)))
            self.wfile.flush()
            self.close_connection = True
            return
        if kind == "short-length":
            self.send(status, body, headers, length=max(0, len(body) - int(lie.get("extra", 10))))
            return
        if kind == "drip" and self.command != "HEAD":
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            rate, chunk = float(lie.get("rate", 2048)), int(lie.get("chunk", 256))
            try:
                for i in range(0, len(body), chunk):
                    self.wfile.write(body[i:i + chunk])
                    self.wfile.flush()
                    time.sleep(chunk / rate)
            except OSError:
                self.close_connection = True
            return
        self.send(status, body, headers)

    def list(self, path, query, lie):
        bucket = path.split("/")[0]
        prefix = query.get("prefix", [""])[0]
        token = query.get("continuation-token", [""])[0]
        kind = lie["lie"] if lie else ""
        entries = []
        truncated, next_token = False, ""
        if kind == "list-loop":
            n = int(lie.get("keys", 1000))
            page = int(token.split("-")[-1]) + 1 if lie.get("fresh") and token else 0
            entries = [(prefix + "loop-%06d-%08d" % (page, i), 1) for i in range(n)]
            truncated, next_token = True, ("token-%d" % page if lie.get("fresh") else "the-same-token")
        else:
            with lock:
                keys = sorted(k[len(bucket) + 1:] for k in objects if k.startswith(bucket + "/"))
            keys = [k for k in keys if k.startswith(prefix) and k > token]
            page = keys[:1000]
            with lock:
                entries = [(k, len(objects[bucket + "/" + k])) for k in page]
            if len(keys) > 1000:
                truncated, next_token = True, page[-1]
            if kind == "list-outside":
                entries += [(k, 1) for k in lie.get("keys", [])]
        parts = ['<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>%s</Name>' % xml_escape(bucket)]
        if kind == "list-huge":
            parts.append("<!--" + "x" * int(lie.get("bytes", 17 << 20)) + "-->")
        for k, size in entries:
            parts.append("<Contents><Key>%s</Key><Size>%d</Size><ETag>\"e\"</ETag></Contents>" % (xml_escape(k), size))
        parts.append("<IsTruncated>%s</IsTruncated>" % ("true" if truncated else "false"))
        if next_token:
            parts.append("<NextContinuationToken>%s</NextContinuationToken>" % xml_escape(next_token))
        parts.append("</ListBucketResult>")
        self.answer(200, "".join(parts).encode(), {"Content-Type": "application/xml"}, lie)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
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
