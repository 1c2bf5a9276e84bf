#!/usr/bin/env python3
"""gnutls_dot_client: DNS over TLS (RFC 7858) with GnuTLS's gnutls-cli, for the interop test.

    gnutls_dot_client.py HOST PORT SNI CA_FILE SUITE GROUP MODE

Runs gnutls-cli (package gnutls-bin), writes the framed query to its stdin, reads the answer
from its stdout (after "- Simple Client Mode:"; stdin stays open until the answer is in, since
gnutls-cli ends the session at end of input), and parses what it printed. gnutls-cli can force
all of it: --priority offers TLS 1.3, SUITE's cipher and GROUP only; hrr offers first X448 (for
X25519) or P-521 (for P-256) with a share for it alone, then GROUP, so the server must retry;
its debug log (-d 4) says when a HelloRetryRequest arrived (hrr=true|false, for the run as a
whole). Trust: --x509cafile CA_FILE, name checked against SNI (--verify-hostname). resume: -r
--waitresumption, a first connection that only takes the ticket (gnutls-cli sends data on the
last connection only: its line says rcode=unsent) and a second that must be resumed ("This is a
resumed session"); for a resumed session gnutls-cli's summary has no key exchange, so its
group comes from the debug log ("Selected group", psk_dhe_ke).
Prints one "key=value" line per connection; exit 0 when every connection negotiated TLS 1.3,
the suite, the group, ALPN "dot", the retry or its absence as asked, and the
query got a NOERROR answer with records.
"""

import os
import re
import select
import subprocess
import sys
import tempfile
import time

import dot_wire

CIPHERS = {
    "TLS_AES_128_GCM_SHA256": "AES-128-GCM",
    "TLS_AES_256_GCM_SHA384": "AES-256-GCM",
    "TLS_CHACHA20_POLY1305_SHA256": "CHACHA20-POLY1305",
}
GROUPS = {"X25519": "X25519", "P-256": "SECP256R1"}
# GnuTLS sends a share for the first group and for the first of another kind (ECDH over X25519
# or X448 vs over NIST curves): the first group offered for hrr is thus of GROUP's kind, one
# onepassd takes with neither engine (openssl: X25519, P-256, P-384; onepass: X25519, P-256).
HRR_FIRST = {"X25519": "X448", "P-256": "SECP521R1"}
CLIENT_MODE = b"- Simple Client Mode:\n\n"
TIMEOUT = 5  # [s] for the answer, then for gnutls-cli to exit


def run_gnutls_cli(argv):
    """gnutls-cli's stdout up to the end of the answer, and its debug log."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        proc.stdin.write(dot_wire.FRAMED_QUERY)
        proc.stdin.flush()
        out = b""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.05)
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
            answer = out.partition(CLIENT_MODE)[2]
            length = dot_wire.framed_length(answer)
            if length is not None and len(answer) >= length:
                break
        proc.stdin.close()
        try:
            rc = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        log.seek(0)
        return rc, out, log.read().decode("utf-8", "replace")


def main(argv):
    if len(argv) != 8:
        print("usage: gnutls_dot_client.py HOST PORT SNI CA_FILE SUITE GROUP MODE",
              file=sys.stderr)
        return 2
    host, port, sni, ca_file, suite, group, mode = argv[1:]
    if suite not in CIPHERS or group not in GROUPS:
        print("unknown suite or group", suite, group, file=sys.stderr)
        return 2
    groups = "+GROUP-" + GROUPS[group]
    if mode == "hrr":
        groups = "+GROUP-" + HRR_FIRST[group] + ":" + groups
    priority = ("NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+" + CIPHERS[suite] +
                ":-GROUP-ALL:" + groups)
    command = ["gnutls-cli", "--port", port, "--sni-hostname", sni, "--verify-hostname", sni,
               "--x509cafile", ca_file, "--alpn", "dot", "--priority", priority, "-d", "4"]
    if mode == "resume":
        command += ["--resume", "--waitresumption"]
    rc, out, log = run_gnutls_cli(command + [host])
    text, _, answer = out.partition(CLIENT_MODE)
    text = text.decode("utf-8", "replace")
    if rc != 0 or not answer:
        print("gnutls-cli exit", rc, text, log[-4000:], file=sys.stderr)
        return 1
    try:
        rcode, ancount = dot_wire.rcode_and_ancount(answer[2:dot_wire.framed_length(answer)])
    except (TypeError, ValueError) as error:
        print("answer:", error, text, file=sys.stderr)
        return 1
    hrr = "HELLO RETRY REQUEST" in log
    selected = re.findall(r"Selected group (\S+) \(", log)
    # One section per connection: "- Connecting again" starts the resumed one.
    sections = text.split("- Connecting again")
    ok = len(sections) == (2 if mode == "resume" else 1)
    for i, section in enumerate(sections):
        description = re.search(r"- Description: \(([^)]*)-X\.509\)-(?:\(ECDHE-([^)]*)\))?"
                                r"-(?:\([^)]*\)-)?\(([^)]*)\)", section)
        alpn = re.search(r"- Application protocol: (\S+)", section)
        resumed = "This is a resumed session" in section
        version = "TLSv1.3" if description and description.group(1) == "TLS1.3" else "other"
        cipher = description.group(3) if description else ""
        suite_name = next((k for k, v in CIPHERS.items() if v == cipher), cipher)
        kx = description.group(2) if description else None
        if kx is None and resumed and selected:
            kx = selected[-1]  # psk_dhe_ke: the group is in the debug log only
        group_name = next((k for k, v in GROUPS.items() if v == kx), kx or "none")
        last = i == len(sections) - 1
        print(f"version={version} suite={suite_name} group={group_name} "
              f"resumed={'true' if resumed else 'false'} hrr={'true' if hrr else 'false'} "
              f"alpn={alpn.group(1) if alpn else ''} "
              f"rcode={rcode if last else 'unsent'} ancount={ancount if last else 'unsent'}")
        ok = (ok and version == "TLSv1.3" and suite_name == suite and group_name == group and
              alpn is not None and alpn.group(1) == "dot" and
              resumed == (mode == "resume" and last))
    ok = ok and rcode == 0 and ancount >= 1 and hrr == (mode == "hrr")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
