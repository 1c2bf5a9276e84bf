#!/usr/bin/env python3
"""Server memory per idle DNS-over-TLS connection.

  dot_idle_memory.py ONEPASSD [CONNECTIONS]

Starts ONEPASSD (one worker, a throwaway P-256 certificate made with openssl, --tls-listen on
loopback, --tls-idle-timeout-ms 60000, the per-client limits raised), opens CONNECTIONS TLS
connections (default 1000), sends one query on each and reads its answer, then holds them all
open and idle, and prints the server's VmRSS before and after and the difference per
connection. Loopback only.
"""
import os
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time

QUERY = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def main() -> int:
    binary, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    work = tempfile.mkdtemp()
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=localhost"], check=True, capture_output=True)
    server = subprocess.Popen(
        [binary, "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--tls-cert", cert,
         "--tls-key", key, "--tls-idle-timeout-ms", "60000", "--workers", "1",
         "--max-connections", str(count + 100), "--max-connections-per-client", str(count + 100),
         "--tls-full-per-client", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            if not line:
                raise RuntimeError("onepassd exited before it listened")
            if line.startswith("tls listening on "):
                port = int(line.rsplit(":", 1)[1])
        before = rss_kb(server.pid)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["dot"])
        held = []
        for _ in range(count):
            tls = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
            tls.sendall(struct.pack("!H", len(QUERY)) + QUERY)
            length = struct.unpack("!H", tls.recv(2))[0]
            answer = b""
            while len(answer) < length:
                answer += tls.recv(length - len(answer))
            held.append(tls)
        time.sleep(0.5)  # the last answers' parks
        after = rss_kb(server.pid)
        print(f"{count} idle DoT connections: server VmRSS {before} kB before, {after} kB with "
              f"them, {(after - before) * 1024 // count} bytes per connection")
        for tls in held:
            tls.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
