#!/usr/bin/env python3
"""Asks a server the queries of a file over TCP and prints one line per answer, reduced.

  zone_answers.py QUERIES PORT > ANSWERS

QUERIES: "name type" lines (scripts/gen-dns-zone.py --queries). Each answer is reduced to its
RCODE, AA and TC bits and each section as a sorted list of records (owner lowercased, names in
RDATA decompressed and lowercased, TTL kept), so record order and compression do not count:
two servers' outputs agree line by line when their answers do; the part before the tab is the
RCODE and answer section alone. zone_scale.sh compares each
server's lines with onepassd's (127.0.0.1 only).
"""
import socket
import struct
import sys

TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "MX": 15, "TXT": 16, "AAAA": 28, "SRV": 33,
         "DS": 43}
# RDATA that holds names, as (bytes before the name, names): RFC 1035 §3.3, RFC 2782.
NAMED = {2: (0, 1), 5: (0, 1), 12: (0, 1), 6: (0, 2), 15: (2, 1), 33: (6, 1)}


def read_name(msg, pos):
    labels = []
    end = None
    for _ in range(128):
        length = msg[pos]
        if length >= 0xC0:
            if end is None:
                end = pos + 2
            pos = ((length & 0x3F) << 8) | msg[pos + 1]
            continue
        pos += 1
        if length == 0:
            break
        labels.append(msg[pos:pos + length].lower())
        pos += length
    return b".".join(labels), (end if end is not None else pos)


def digest(msg):
    rcode = msg[3] & 0x0F
    flags = (msg[2] & 0x06)  # AA, TC
    counts = struct.unpack(">HHHH", msg[4:12])
    pos = 12
    for _ in range(counts[0]):
        _, pos = read_name(msg, pos)
        pos += 4
    sections = []
    for count in counts[1:]:
        records = []
        for _ in range(count):
            owner, pos = read_name(msg, pos)
            rtype, rclass, ttl, rdlength = struct.unpack(">HHIH", msg[pos:pos + 10])
            pos += 10
            rdata = msg[pos:pos + rdlength]
            if rtype in NAMED:
                prefix, names = NAMED[rtype]
                at = pos + prefix
                parts = [msg[pos:at]]
                for _ in range(names):
                    name, at = read_name(msg, at)
                    parts.append(name + b".")
                parts.append(msg[at:pos + rdlength])
                rdata = b"|".join(parts)
            if rtype != 41:  # the OPT is not data
                records.append((owner, rtype, rclass, ttl, rdata))
            pos += rdlength
        sections.append(sorted(records))
    return (rcode, flags, sections)


def ask(port, name, qtype):
    wire = b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"
    query = struct.pack(">HHHHHH", 0x1234, 0, 1, 0, 0, 0) + wire + struct.pack(">HH", qtype, 1)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(struct.pack(">H", len(query)) + query)
        data = b""
        while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return digest(data[2:])


def main():
    port = int(sys.argv[2])
    for line in open(sys.argv[1]):
        if line.strip():
            name, qtype = line.split()
            rcode, flags, sections = ask(port, name, TYPES[qtype])
            # First the RCODE and the answer section alone (servers that add other records to
            # authority or additional, as Knot does not, still agree there), then everything.
            print(f"{rcode} {sections[0]!r}\t{flags} {sections!r}")


if __name__ == "__main__":
    main()
