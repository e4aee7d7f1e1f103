"""A headless Chromium driven over the DevTools protocol on a pipe.

Debian's `chromium` is started with --remote-debugging-pipe: commands go in on
file descriptor 3 and answers come out on descriptor 4, each a JSON message
ended by a NUL byte. No npm, no websocket, no port. The browser runs in its own
process group with a fresh profile folder; close() ends that group and removes
the folder.

    with Browser() as b:
        b.open("file:///tmp/report.html", width=1280, height=900)
        b.evaluate("document.title")
        png = b.screenshot(full_page=True)
"""

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--hide-scrollbars",
    "--remote-debugging-pipe",
]


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, executable=None, timeout=60):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise BrowserError("no chromium on PATH (tools/setup.sh --browser installs it)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="libshard-chromium-")
        cmd_r, cmd_w = os.pipe()
        out_r, out_w = os.pipe()
        # The browser reads commands on fd 3 and writes answers to fd 4: the
        # shell (bash: dash takes one-digit descriptors only) that execs it puts the pipe ends there (moved above 10 first,
        # so that neither redirection overwrites the other's source).
        child_r, child_w = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(out_w, fcntl.F_DUPFD, 10)
        for fd in (cmd_r, out_w):
            os.close(fd)
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", 'exec "$0" "$@" 3<&%d 4>&%d %d<&- %d>&-' % (child_r, child_w, child_r, child_w),
             self.executable, *FLAGS, "--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(child_r, child_w), start_new_session=True)
        os.close(child_r)
        os.close(child_w)
        self.wfd, self.rfd = cmd_w, out_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if ready:
                chunk = os.read(self.rfd, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the pipe (exit status %s)" % self.proc.poll())
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.wfd, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def open(self, url, width, height):
        """Loads `url` in a viewport of width x height CSS pixels (scale 1)."""
        if not self.session:
            target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                     session=False)["sessionId"]
            self.send("Page.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError("script failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def screenshot(self, full_page=False):
        params = {"format": "png"}
        if full_page:
            w, h = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update({"captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}})
        return base64.b64decode(self.send("Page.captureScreenshot", params)["data"])

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False)
                except (BrowserError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            # The whole group: renderer and GPU helper processes too.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        finally:
            for fd in (self.wfd, self.rfd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)
