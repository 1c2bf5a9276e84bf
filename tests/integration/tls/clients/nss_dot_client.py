#!/usr/bin/env python3
"""nss_dot_client: DNS over TLS (RFC 7858) with NSS's tstclnt, for the interop test.

    nss_dot_client.py HOST PORT SNI CA_FILE SUITE GROUP MODE

Runs tstclnt (package libnss3-tools) with the framed query in a file (-A) and reads the
answers from its stdout; what it negotiated comes from its -v report on stderr. Trust: an NSS
database made once per CA_FILE beside it (certutil -A -t "C,,"), the name checked against SNI
(-a). tstclnt forces the suite (-c :13xx, all others disabled) and the groups (-I, in order:
NSS sends a key share for the first only). It reports the suite as key size and cipher, the
group as its key size only (255-bit: X25519, 256-bit: P-256), and a ticket resumption in its
process-wide "stateless resumes" count; it cannot report a HelloRetryRequest (hrr=unreported)
and has no ALPN option (alpn=none: no ALPN offered). hrr offers P-521 first (taken by neither
engine of onepassd), then GROUP: with that one share, only a retry can succeed. tstclnt leaves
a connection only when the server closes it, which a DoT server does not do after an answer
(RFC 7858 §3.4), so a run is stopped once its answers are in. resume (-u -L 2, the query sent
on each connection): the first connection is relayed through a local proxy that closes it
after its answer, so that tstclnt reconnects; the second, from the first one's ticket, must be
resumed. -c with -L 2 aborts tstclnt 3.87 at the reconnect ("free(): invalid pointer"), so
resume leaves the suite to the server's --tls-ciphersuites and checks it. Prints one
"key=value" line per connection; exit 0 when every connection negotiated TLS 1.3, the suite,
the group, resumption as asked, and got a NOERROR answer with records.
"""

import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time

import dot_wire

SUITES = {
    "TLS_AES_128_GCM_SHA256": (":1301", "128-bit AES-GCM"),
    "TLS_AES_256_GCM_SHA384": (":1302", "256-bit AES-GCM"),
    "TLS_CHACHA20_POLY1305_SHA256": (":1303", "256-bit CHACHA20POLY1305"),
}
GROUPS = {"X25519": ("x25519", "255"), "P-256": ("P256", "256")}
TIMEOUT = 5  # [s] for each step of a run


def nss_db(ca_file):
    """An NSS database trusting CA_FILE, made once beside it (the test's PKI directory)."""
    path = ca_file + ".nssdb"
    if os.path.isdir(path):
        return path
    scratch = tempfile.mkdtemp(dir=os.path.dirname(ca_file) or ".")
    subprocess.run(["certutil", "-N", "-d", "sql:" + scratch, "--empty-password"], check=True)
    subprocess.run(["certutil", "-A", "-d", "sql:" + scratch, "-n", "dot-test-ca", "-t", "C,,",
                    "-i", ca_file], check=True)
    try:
        os.rename(scratch, path)
    except OSError:  # made meanwhile by another run
        pass
    return path


class ClosingProxy:
    """Relays connections to (host, port); closes the first one when told (close_first)."""

    def __init__(self, host, port):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.close_first = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        first = True
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target, timeout=TIMEOUT)
            threading.Thread(target=self._relay, args=(client, server, first),
                             daemon=True).start()
            first = False

    def _relay(self, client, server, closable):
        with client, server:
            while not (closable and self.close_first.is_set()):
                ready, _, _ = select.select([client, server], [], [], 0.01)
                for source in ready:
                    data = source.recv(65536)
                    if not data:
                        return
                    (server if source is client else client).sendall(data)

    def close(self):
        self.listener.close()


def run_tstclnt(argv, log, answers, proxy):
    """tstclnt's stdout up to the end of its `answers`-th answer; its -v report goes to `log`."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
    try:
        out = b""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and len(split_answers(out)) < answers:
            ready, _, _ = select.select([proc.stdout], [], [], 0.05)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
            if proxy and split_answers(out):
                proxy.close_first.set()  # the first connection has its answer: end it
        return out
    finally:
        proc.kill()
        proc.wait()


def split_answers(out):
    """The framed answers in tstclnt's stdout, each unframed."""
    answers = []
    while True:
        length = dot_wire.framed_length(out)
        if length is None or len(out) < length:
            return answers
        answers.append(out[2:length])
        out = out[length:]


def main(argv):
    if len(argv) != 8:
        print("usage: nss_dot_client.py HOST PORT SNI CA_FILE SUITE GROUP MODE", file=sys.stderr)
        return 2
    host, port, sni, ca_file, suite, group, mode = argv[1:]
    if suite not in SUITES or group not in GROUPS:
        print("unknown suite or group", suite, group, file=sys.stderr)
        return 2
    groups = ("P521," if mode == "hrr" else "") + GROUPS[group][0]
    connections = 2 if mode == "resume" else 1
    proxy = ClosingProxy(host, int(port)) if mode == "resume" else None
    with tempfile.NamedTemporaryFile() as query, tempfile.TemporaryFile() as log:
        query.write(dot_wire.FRAMED_QUERY)
        query.flush()
        command = ["tstclnt", "-h", "127.0.0.1" if proxy else host,
                   "-p", str(proxy.port) if proxy else port, "-a", sni,
                   "-d", "sql:" + nss_db(ca_file), "-V", "tls1.3:tls1.3", "-I", groups,
                   "-A", query.name, "-m", "0", "-v"]
        # -c with -L 2 aborts tstclnt 3.87 at the reconnect (see above).
        command += ["-u", "-L", "2"] if mode == "resume" else ["-c", SUITES[suite][0]]
        try:
            out = run_tstclnt(command, log, connections, proxy)
        finally:
            if proxy:
                proxy.close()
        log.seek(0)
        report = log.read().decode("utf-8", "replace")
    answers = split_answers(out)
    # One report per handshake: the channel line, then the session cache counters.
    handshakes = re.findall(r"SSL version (\d+)\.(\d+) using (\d+-bit \S+) with .*?\n.*?"
                            r"Key Exchange: (\d+)-bit .*?(\d+) stateless resumes", report,
                            re.DOTALL)
    ok = len(handshakes) == connections and len(answers) == connections
    resumes_before = 0
    for i, (major, minor, cipher, kea_bits, resumes) in enumerate(handshakes):
        try:
            rcode, ancount = dot_wire.rcode_and_ancount(answers[i] if i < len(answers) else b"")
        except ValueError:
            rcode, ancount = "none", "none"
        version = "TLSv1.3" if (major, minor) == ("3", "4") else "other"
        suite_name = next((k for k, v in SUITES.items() if v[1] == cipher), cipher)
        group_name = next((k for k, v in GROUPS.items() if v[1] == kea_bits), kea_bits + "-bit")
        resumed = int(resumes) > resumes_before
        resumes_before = int(resumes)
        print(f"version={version} suite={suite_name} group={group_name} "
              f"resumed={'true' if resumed else 'false'} hrr=unreported alpn=none "
              f"rcode={rcode} ancount={ancount}")
        ok = (ok and version == "TLSv1.3" and suite_name == suite and group_name == group and
              resumed == (i == 1) and rcode == 0 and ancount >= 1)
    if not ok:
        print(report[-3000:], file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
