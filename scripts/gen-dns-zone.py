#!/usr/bin/env python3
"""Writes a large unsigned zone for load-time and query-rate measurements (loadtest/zone_scale.sh).

Each of --names names n<i>.<origin> gets an A; every 4th also an AAAA, every 10th an MX, every
20th a TXT; every 50th is a CNAME instead, every 500th a delegation with glue. 1,000,000 names
give about 1.4 M records and 40 MB of text, the size registries serve. Deterministic: the
same --names and --seed give the same file. With --queries FILE, also writes FILE with
--query-count "name type" lines drawn at random from the zone's answering names (loadtest
--queries; delegations left out: onepass-load counts a referral as an answer without records).
"""
import argparse
import random
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--names", type=int, default=1_000_000)
    parser.add_argument("--origin", default="bench.test.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True, help="the zone file to write")
    parser.add_argument("--queries", help="also write random queries to this file")
    parser.add_argument("--query-count", type=int, default=100_000)
    args = parser.parse_args()
    if args.names < 1 or args.names > 50_000_000:
        sys.exit("--names must be 1..50000000")
    origin = args.origin if args.origin.endswith(".") else args.origin + "."
    rng = random.Random(args.seed)
    with open(args.out, "w") as out:
        out.write(f"$ORIGIN {origin}\n$TTL 3600\n")
        out.write(f"@ IN SOA ns1.{origin} hostmaster.{origin} 2026113001 7200 3600 1209600 300\n")
        out.write(f"@ IN NS ns1.{origin}\n@ IN NS ns2.{origin}\n")
        out.write("ns1 IN A 192.0.2.53\nns2 IN A 198.51.100.53\nmail IN A 192.0.2.25\n")
        lines = []
        for i in range(args.names):
            name = f"n{i}"
            if i % 500 == 499:
                lines.append(f"{name} IN NS ns.{name}\nns.{name} IN A 192.0.2.{i % 250 + 1}\n")
                continue
            if i % 50 == 49:
                lines.append(f"{name} 300 IN CNAME n{rng.randrange(args.names)}\n")
                continue
            r = rng.getrandbits(32)
            lines.append(f"{name} IN A {10 + (r >> 24) % 200}.{(r >> 16) & 255}.{(r >> 8) & 255}.{r & 255}\n")
            if i % 4 == 0:
                lines.append(f"{name} IN AAAA 2001:db8:{(r >> 16):x}::{r & 0xffff:x}\n")
            if i % 10 == 0:
                lines.append(f"{name} IN MX 10 mail\n")
            if i % 20 == 0:
                lines.append(f'{name} IN TXT "v=spf1 ip4:192.0.2.{i % 250} -all"\n')
            if len(lines) > 10000:
                out.write("".join(lines))
                lines = []
        out.write("".join(lines))
    if args.queries:
        with open(args.queries, "w") as q:
            for _ in range(args.query_count):
                i = rng.randrange(args.names)
                if i % 500 == 499:
                    i -= 1  # a delegation answers with a referral (no answer records)
                q.write(f"n{i}.{origin} {'AAAA' if i % 4 == 0 and rng.random() < 0.3 else 'A'}\n")


if __name__ == "__main__":
    main()
