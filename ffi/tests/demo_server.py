"""A real `taxi-fiscal demo` server for the binding tests, on a free port and a fresh directory.

Used by `test_ffi.py` (import) and by `scripts/test-ffi` for the Kotlin program:

    python3 ffi/tests/demo_server.py TAXI_FISCAL_BIN [--tls] -- java ... MainKt

starts the server (serving HTTPS with a throwaway CA with `--tls`), runs the command with
TAXI_FISCAL_URL set to the server's address (and TAXI_FISCAL_CA_FILE to the CA's PEM with
`--tls`), stops the server and exits with the command's status. Like the Rust e2e harness (tests/src/server.rs),
it reads the address from the first line the server prints and waits for `/health` with a
bounded deadline; nothing sleeps for a fixed time.
"""

import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# A debug build seeding the demo registry on a loaded 2-core CI machine.
READY_DEADLINE_S = 60.0


class DemoServer:
    """`with DemoServer(bin) as s: s.url` — the server runs inside the block."""

    def __init__(self, binary, tls=False):
        self.binary = binary
        self.tls = tls
        self.url = None
        # With `tls`: the PEM text of the throwaway CA the server's certificate is from.
        self.ca_pem = None
        self._dir = None
        self._proc = None

    def __enter__(self):
        self._dir = tempfile.mkdtemp(prefix="taxi-fiscal-ffi-")
        env = dict(os.environ)
        env.pop("TAXI_FISCAL_JWT_SECRET", None)
        env.setdefault("TAXI_FISCAL_LOG", "error")
        if self.tls:
            # The same throwaway CA as the Rust tests' (scripts/test-ca, openssl).
            ca_dir = os.path.join(self._dir, "ca")
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "test-ca")
            subprocess.run(["bash", script, ca_dir], check=True)
            with open(os.path.join(ca_dir, "ca.pem")) as f:
                self.ca_pem = f.read()
            env["TAXI_FISCAL_TLS_CERT"] = os.path.join(ca_dir, "server.pem")
            env["TAXI_FISCAL_TLS_KEY"] = os.path.join(ca_dir, "server.key")
        self._proc = subprocess.Popen(
            [self.binary, "demo", "--listen", "127.0.0.1:0", "--data", os.path.join(self._dir, "data")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            first = self._proc.stdout.readline().decode("utf-8", "replace")
            # The rest of the banner is drained so that a full pipe never blocks the server.
            threading.Thread(target=self._proc.stdout.read, daemon=True).start()
            m = re.search(r"(https?)://([0-9.]+:[0-9]+)", first)
            if not m:
                raise RuntimeError(f"the server printed no address: {first!r}")
            self.url = f"{m.group(1)}://{m.group(2)}"
            self._wait_healthy()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_healthy(self):
        deadline = time.monotonic() + READY_DEADLINE_S
        last = None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"the server exited with status {self._proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2, context=self.ssl_context()) as r:
                    if r.status == 200:
                        return
            except OSError as e:  # connection refused while it starts
                last = e
            # Polling interval of a bounded wait, not a synchronisation by sleep.
            time.sleep(0.05)
        raise RuntimeError(f"/health did not answer within {READY_DEADLINE_S} s: {last}")

    def ssl_context(self):
        """What urllib needs to trust this server (None over plain http)."""
        if self.ca_pem is None:
            return None
        return ssl.create_default_context(cadata=self.ca_pem)

    def __exit__(self, *exc):
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=30)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        return False


def main(argv):
    tls = len(argv) > 2 and argv[2] == "--tls"
    rest = argv[3:] if tls else argv[2:]
    if len(rest) < 2 or rest[0] != "--":
        print("uso: demo_server.py TAXI_FISCAL_BIN [--tls] -- COMANDO [ARGS…]", file=sys.stderr)
        return 2
    with DemoServer(argv[1], tls=tls) as server:
        env = dict(os.environ, TAXI_FISCAL_URL=server.url)
        if tls:
            # The command trusts the server's throwaway CA through this file.
            ca = os.path.join(server._dir, "ca", "ca.pem")
            env["TAXI_FISCAL_CA_FILE"] = ca
        return subprocess.call(rest[1:], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
