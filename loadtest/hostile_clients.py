#!/usr/bin/env python3
"""Hostile DNS-over-TCP clients for loadtest/soak.sh: a steady rate of bad connections.

  hostile_clients.py HOST PORT RATE SECONDS

Starts RATE connections per second for SECONDS, in turn: a dribbler (one byte of a query every
200 ms), a never-reader (1,000 pipelined queries behind the smallest receive window, never
reading), garbage (random bytes), and oversize (a 65,535-byte length prefix and 70,000 bytes).
Each connection gives up after at most 10 s, so at most 10 * RATE are open at once. Prints the
count started per kind at the end. Loopback only: HOST must be in 127.0.0.0/8.
"""
import asyncio
import os
import socket
import struct
import sys


def query(qid: int) -> bytes:
    message = struct.pack(">HHHHHH", qid & 0xFFFF, 0x0100, 1, 0, 0, 0)
    message += b"\x03www\x07example\x03com\x00\x00\x01\x00\x01"
    return struct.pack(">H", len(message)) + message


async def open_socket(host, port, tiny_window=False):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if tiny_window:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, port))
    return sock


async def dribbler(host, port):
    sock = await open_socket(host, port)
    try:
        for byte in query(1):
            await asyncio.get_running_loop().sock_sendall(sock, bytes([byte]))
            await asyncio.sleep(0.2)
    finally:
        sock.close()


async def never_reader(host, port):
    sock = await open_socket(host, port, tiny_window=True)
    try:
        payload = b"".join(query(i) for i in range(1000))
        await asyncio.wait_for(asyncio.get_running_loop().sock_sendall(sock, payload), 5)
        await asyncio.sleep(5)
    finally:
        sock.close()


async def garbage(host, port):
    sock = await open_socket(host, port)
    try:
        await asyncio.get_running_loop().sock_sendall(sock, os.urandom(200))
        await asyncio.sleep(1)
    finally:
        sock.close()


async def oversize(host, port):
    sock = await open_socket(host, port)
    try:
        await asyncio.wait_for(
            asyncio.get_running_loop().sock_sendall(sock, b"\xff\xff" + b"\0" * 70000), 5)
        await asyncio.sleep(1)
    finally:
        sock.close()


async def bounded(kind, host, port, failures):
    try:
        await asyncio.wait_for(kind(host, port), 10)
    except (OSError, asyncio.TimeoutError):
        failures[kind.__name__] = failures.get(kind.__name__, 0) + 1


async def main():
    host, port, rate, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    if not host.startswith("127."):
        sys.exit("hostile_clients.py: loopback addresses only")
    kinds = [dribbler, never_reader, garbage, oversize]
    started = {kind.__name__: 0 for kind in kinds}
    failures = {}
    tasks = set()
    loop = asyncio.get_running_loop()
    begin = loop.time()
    n = 0
    while loop.time() - begin < seconds:
        kind = kinds[n % len(kinds)]
        started[kind.__name__] += 1
        task = asyncio.ensure_future(bounded(kind, host, port, failures))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        n += 1
        await asyncio.sleep(max(0.0, begin + n / rate - loop.time()))
    if tasks:
        await asyncio.wait(tasks, timeout=15)
    print("hostile started: " + " ".join(f"{k}={v}" for k, v in started.items()) +
          "; cut or refused by the server: " + (" ".join(f"{k}={v}" for k, v in failures.items()) or "none"))


asyncio.run(main())
