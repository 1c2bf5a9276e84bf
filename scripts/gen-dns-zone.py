#!/usr/bin/env python3
"""Writes a large unsigned zone for load-time and query-rate measurements (loadtest/zone_scale.sh).

--shape picks what the zone looks like (every shape is deterministic: the same --names and
--seed give the same file):

  default  each of --names names n<i>.<origin> gets an A; every 4th also an AAAA, every 10th
           an MX, every 20th a TXT; every 50th is a CNAME instead, every 500th a delegation
           with glue. 1,000,000 names give about 1.4 M records and 40 MB of text.
  tld      a registry: every name is a delegation. 85% use one of the registrars' shared NS
           sets (2-4 out-of-zone hosts; a few large registrars hold most delegations, as in
           .com), 12% their own pair of out-of-zone hosts, 3% in-bailiwick name servers with
           A (and for a third AAAA) glue; every 5th has a DS (ECDSA P-256 key, SHA-256
           digest). Sign it with NSEC3 opt-out for the signed shape (zone_scale.sh --shape
           tld-signed).
  mixed    a hosting zone: every name an A, a third an AAAA, a quarter an MX (shared mail
           hosts), a fifth a TXT (SPF shared, verification tokens not), every 10th a CNAME
           instead, every 20th an SRV beside it.

With --queries FILE, also writes FILE with --query-count "name type" lines drawn at random
from the zone's names (default shape: answering names only, since onepass-load counts a
referral as an answer without records; other shapes: any name, and some that do not exist).
"""
import argparse
import random
import sys

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def label(rng, i):
    """A name-like label, unique by its numeric suffix."""
    return "".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 10))) + str(i)


def address_records(name, r, with_aaaa):
    """An A (and an AAAA) for `name` from the 32 random bits `r`."""
    text = f"{name} IN A {10 + (r >> 24) % 200}.{(r >> 16) & 255}.{(r >> 8) & 255}.{r & 255}\n"
    if with_aaaa:
        text += f"{name} IN AAAA 2001:db8:{(r >> 16):x}::{r & 0xffff:x}\n"
    return text


def write_default(out, args, rng):
    origin = args.origin
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
        lines.append(address_records(name, r, i % 4 == 0))
        if i % 10 == 0:
            lines.append(f"{name} IN MX 10 mail\n")
        if i % 20 == 0:
            lines.append(f'{name} IN TXT "v=spf1 ip4:192.0.2.{i % 250} -all"\n')
        if len(lines) > 10000:
            out.write("".join(lines))
            lines = []
    out.write("".join(lines))
    names = []
    for _ in range(args.query_count if args.queries else 0):
        i = rng.randrange(args.names)
        if i % 500 == 499:
            i -= 1  # a delegation answers with a referral (no answer records)
        names.append(f"n{i}.{origin} {'AAAA' if i % 4 == 0 and rng.random() < 0.3 else 'A'}")
    return names


def registrar_ns_sets(rng, count):
    """NS sets of `count` registrars: 2-4 hosts under the registrar's own domain."""
    sets = []
    for r in range(count):
        domain = f"{label(rng, r)}-dns.{rng.choice(['com', 'net', 'org', 'eu'])}."
        sets.append([f"ns{k + 1}.{domain}" for k in range(rng.choice([2, 2, 2, 3, 4]))])
    return sets


def write_tld(out, args, rng):
    sets = registrar_ns_sets(rng, max(20, args.names // 1000))
    # Zipf-like: registrar k gets a share proportional to 1/(k+1).
    weights = [1.0 / (k + 1) for k in range(len(sets))]
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    owners = []
    lines = []
    for i in range(args.names):
        name = label(rng, i)
        owners.append(name)
        roll = rng.randrange(100)
        if roll < 3:
            hosts = [f"ns1.{name}", f"ns2.{name}"]
            for k, host in enumerate(hosts):
                lines.append(f"{name} IN NS {host}\n")
                r = rng.getrandbits(24)
                lines.append(f"{host} IN A {100 + k}.{r >> 16}.{(r >> 8) & 255}.{r & 255}\n")
                if i % 3 == 0:
                    lines.append(f"{host} IN AAAA 2001:db8:{r >> 8:x}::{k + 1}\n")
        elif roll < 15:
            for k in range(2):
                lines.append(f"{name} IN NS ns{k + 1}.{name}-hosting.net.\n")
        else:
            pick = rng.random() * total
            lo, hi = 0, len(cumulative) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if cumulative[mid] < pick:
                    lo = mid + 1
                else:
                    hi = mid
            for host in sets[lo]:
                lines.append(f"{name} IN NS {host}\n")
        if i % 5 == 0:
            digest = "%064x" % rng.getrandbits(256)
            lines.append(f"{name} 86400 IN DS {rng.randrange(65536)} 13 2 {digest}\n")
        if len(lines) > 10000:
            out.write("".join(lines))
            lines = []
    out.write("".join(lines))
    return sample_queries(args, rng, owners, ["NS", "A", "DS", "AAAA"])


def write_mixed(out, args, rng):
    mail = [f"mx{k}.{label(rng, k)}-mail.net." for k in range(50)]
    sip = [f"sip{k}.{label(rng, k)}-voip.net." for k in range(20)]
    out.write("mail IN A 192.0.2.25\n")
    owners = []
    lines = []
    for i in range(args.names):
        name = label(rng, i)
        owners.append(name)
        r = rng.getrandbits(32)
        if i % 10 == 9 and i > 0:
            lines.append(f"{name} 300 IN CNAME {owners[rng.randrange(i)]}\n")
            continue
        lines.append(address_records(name, r, i % 3 == 0))
        if i % 4 == 0:
            lines.append(f"{name} IN MX 10 {mail[r % len(mail)]}\n")
            if i % 8 == 0:
                lines.append(f"{name} IN MX 20 mail\n")
        if i % 5 == 0:
            if i % 10 == 0:
                lines.append(f'{name} IN TXT "v=spf1 include:_spf.{mail[r % len(mail)]} -all"\n')
            else:
                lines.append(f'{name} IN TXT "site-verification={rng.getrandbits(128):032x}"\n')
        if i % 20 == 0:
            lines.append(f"_sip._tcp.{name} IN SRV 10 5 5060 {sip[r % len(sip)]}\n")
        if len(lines) > 10000:
            out.write("".join(lines))
            lines = []
    out.write("".join(lines))
    return sample_queries(args, rng, owners, ["A", "AAAA", "MX", "TXT"])


def sample_queries(args, rng, owners, types):
    """Random "name type" lines: names of the zone, and one in 10 that does not exist."""
    names = []
    for n in range(args.query_count if args.queries else 0):
        if n % 10 == 9:
            names.append(f"nonexistent{n}.{args.origin} A")
        else:
            names.append(f"{owners[rng.randrange(len(owners))]}.{args.origin} {rng.choice(types)}")
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", type=int, default=1_000_000)
    parser.add_argument("--shape", choices=["default", "tld", "mixed"], default="default")
    parser.add_argument("--origin", default="bench.test.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True, help="the zone file to write")
    parser.add_argument("--queries", help="also write random queries to this file")
    parser.add_argument("--query-count", type=int, default=100_000)
    args = parser.parse_args()
    if args.names < 1 or args.names > 50_000_000:
        sys.exit("--names must be 1..50000000")
    if not args.origin.endswith("."):
        args.origin += "."
    origin = args.origin
    rng = random.Random(args.seed)
    with open(args.out, "w") as out:
        out.write(f"$ORIGIN {origin}\n$TTL 3600\n")
        out.write(f"@ IN SOA ns1.{origin} hostmaster.{origin} 2026113001 7200 3600 1209600 300\n")
        out.write(f"@ IN NS ns1.{origin}\n@ IN NS ns2.{origin}\n")
        if args.shape != "default":
            out.write("ns1 IN A 192.0.2.53\nns2 IN A 198.51.100.53\n")
        writer = {"default": write_default, "tld": write_tld, "mixed": write_mixed}[args.shape]
        queries = writer(out, args, rng)
    if args.queries:
        with open(args.queries, "w") as q:
            q.write("".join(line + "\n" for line in queries))


if __name__ == "__main__":
    main()
