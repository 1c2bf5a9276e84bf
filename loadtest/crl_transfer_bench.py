#!/usr/bin/env python3
"""Large CRLs served by onepassd --handler ocsp --crl-dir: server CPU per transfer and the
memory that clients which stall in the middle of one pin, for one or more onepassd binaries in
the same run (an older build beside this one: before and after).

    loadtest/crl_transfer_bench.py [--crl-entries N] [--seconds S] [--rounds R]
                                   [--clients C] [--stalled K] ONEPASSD [ONEPASSD ...]

Generates a CA and a CRL of --crl-entries revoked serials with `openssl ca -gencrl` (250,000
give about 5.4 MB), then per round and binary starts the server with one worker on CPU 0 and
  1. CPU: --clients processes on the other CPUs fetch the CRL over and over for --seconds,
     each transfer read whole and its length checked; the server's user+sys CPU over the
     phase (/proc/PID/stat), divided by the transfers, is the "server us/transfer";
  2. memory: --stalled clients (from 127.0.0.2.., 20 per address, under the per-client
     limit) with a 16 KiB receive buffer send one GET each and read nothing; once the server
     has parked them all (its parked counter, from /metrics), its VmRSS minus the VmRSS before
     is the "stalled RSS"; then they read their CRL to the end, each checked whole.
Prints a table headed by the command line. Ports 127.0.0.1:15380 (service) and 15381 (metrics)
are used; every process started is ended by its PID.
"""
import argparse
import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

PORT = 15380
METRICS_PORT = 15381
REQUEST = b"GET /crl/big.crl HTTP/1.1\r\nHost: bench\r\n\r\n"
TICKS = os.sysconf("SC_CLK_TCK")


def make_crl(work, entries):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{work}/ca.key", "-out",
                    f"{work}/ca.pem", "-subj", "/CN=onepass CRL bench CA", "-days", "30"],
                   check=True, capture_output=True)
    os.makedirs(f"{work}/ca")
    with open(f"{work}/ca/index.txt", "w") as index:
        for serial in range(1, entries + 1):
            index.write(f"R\t301231000000Z\t261130000000Z\t{serial:08X}\tunknown\t/CN=s{serial}\n")
    with open(f"{work}/ca/crlnumber", "w") as number:
        number.write("01\n")
    with open(f"{work}/ca.cnf", "w") as conf:
        conf.write(f"[ca]\ndefault_ca=d\n[d]\ndatabase={work}/ca/index.txt\n"
                   f"crlnumber={work}/ca/crlnumber\ndefault_md=sha256\ndefault_crl_days=7\n")
    subprocess.run(["openssl", "ca", "-batch", "-config", f"{work}/ca.cnf", "-gencrl", "-keyfile",
                    f"{work}/ca.key", "-cert", f"{work}/ca.pem", "-out", f"{work}/crl.pem"],
                   check=True, capture_output=True)
    os.makedirs(f"{work}/crl")
    subprocess.run(["openssl", "crl", "-in", f"{work}/crl.pem", "-outform", "DER", "-out",
                    f"{work}/crl/big.crl"], check=True)
    return os.path.getsize(f"{work}/crl/big.crl")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))


def metric(name):
    with urllib.request.urlopen(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(found.group(1)) if found else -1.0


def read_response(sock):
    chunks = []
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def fetch_loop(seconds, expect, counts):
    os.sched_setaffinity(0, set(range(1, os.cpu_count())) or {0})
    done = bad = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
            sock.sendall(REQUEST)
            response = read_response(sock)
        head, _, body = response.partition(b"\r\n\r\n")
        if head.startswith(b"HTTP/1.1 200 ") and len(body) == expect:
            done += 1
        else:
            bad += 1
    counts.put((done, bad))


def start_server(binary, work, log):
    argv = [binary, "--handler", "ocsp", "--listen", f"127.0.0.1:{PORT}", "--workers", "1",
            "--cpus", "0", "--ocsp-responses", f"{work}/data/responses", "--crl-dir",
            f"{work}/crl", "--crl-max-bytes", str(64 << 20), "--write-timeout-ms", "30000",
            "--max-connections-per-client", "25", "--metrics-listen",
            f"127.0.0.1:{METRICS_PORT}"]
    server = subprocess.Popen(argv, stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            metric("onepass_parked_total")
            return server
        except OSError:
            if server.poll() is not None:
                sys.exit(f"{binary} exited at start; see {log.name}")
            time.sleep(0.1)
    server.kill()
    sys.exit(f"{binary} did not start within 30 s; see {log.name}")


def measure(binary, work, args, crl_size):
    with open(f"{work}/server.log", "ab") as log:
        server = start_server(binary, work, log)
        try:
            counts = multiprocessing.Queue()
            before = cpu_seconds(server.pid)
            clients = [multiprocessing.Process(target=fetch_loop,
                                               args=(args.seconds, crl_size, counts))
                       for _ in range(args.clients)]
            for client in clients:
                client.start()
            results = [counts.get(timeout=args.seconds + 60) for _ in clients]
            for client in clients:
                client.join()
            spent = cpu_seconds(server.pid) - before
            done = sum(r[0] for r in results)
            bad = sum(r[1] for r in results)

            rss_before = rss_kib(server.pid)
            parked_before = metric("onepass_parked_total")
            stalled = []
            for i in range(args.stalled):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
                sock.bind((f"127.0.0.{2 + i // 20}", 0))
                sock.connect(("127.0.0.1", PORT))
                sock.sendall(REQUEST)
                stalled.append(sock)
            deadline = time.monotonic() + 20
            while (metric("onepass_parked_total") < parked_before + args.stalled and
                   time.monotonic() < deadline):
                time.sleep(0.05)
            time.sleep(0.2)
            rss_stalled = rss_kib(server.pid) - rss_before
            whole = 0
            for sock in stalled:
                sock.settimeout(30)
                _, _, body = read_response(sock).partition(b"\r\n\r\n")
                whole += len(body) == crl_size
                sock.close()
            return {"transfers": done, "failed": bad, "us": spent * 1e6 / max(done, 1),
                    "per_s": done / args.seconds, "rss_mib": rss_stalled / 1024,
                    "stalled_whole": whole}
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binaries", nargs="+", metavar="ONEPASSD")
    parser.add_argument("--crl-entries", type=int, default=250000,
                        help="revoked serials in the CRL (default 250000: about 5.4 MB)")
    parser.add_argument("--seconds", type=float, default=5, help="CPU phase length (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, binaries alternating (3)")
    parser.add_argument("--clients", type=int, default=2,
                        help="fetching processes in the CPU phase (default 2)")
    parser.add_argument("--stalled", type=int, default=200,
                        help="clients that stall in the memory phase (default 200)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="crl_bench_")
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([f"{here}/../scripts/make-ocsp-testdata.sh", f"{work}/data"], check=True,
                       capture_output=True)
        crl_size = make_crl(work, args.crl_entries)
        rows = {binary: [] for binary in args.binaries}
        for _ in range(args.rounds):
            for binary in args.binaries:
                rows[binary].append(measure(binary, work, args, crl_size))
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{' '.join(sys.argv)}  ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
              f"load average {load})\n")
        print(f"CRL: {crl_size} bytes, {args.crl_entries} entries; server: one worker on CPU 0\n")
        print("| onepassd | transfers/s | failed | server us/transfer (median, range) | "
              f"RSS held by {args.stalled} stalled clients (median) | stalled ones served whole |")
        print("|---|---|---|---|---|---|")
        for binary, results in rows.items():
            us = [r["us"] for r in results]
            print(f"| {binary} | {statistics.median(r['per_s'] for r in results):.0f} | "
                  f"{sum(r['failed'] for r in results)} | {statistics.median(us):.0f} "
                  f"({min(us):.0f}-{max(us):.0f}) | "
                  f"{statistics.median(r['rss_mib'] for r in results):.1f} MiB | "
                  f"{min(r['stalled_whole'] for r in results)}/{args.stalled} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
