#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR
# The DNS-over-TLS listener as deployed (deploy/onepassd.flags' --tls-* lines: an ECDSA P-256
# certificate from a CA, ticket keys from a file) through testssl.sh, the scanner operators run
# against their TLS services: no finding rated MEDIUM or worse (issue 39's bar). The CA is passed
# to testssl (--add-ca) as a public CA would be in its trust store; the leaf carries an OCSP
# responder URL, as a public CA's does.
# Needs onepassd (build/*/server/onepassd or $ONEPASSD), openssl and testssl
# (scripts/install-deps.sh installs them).

load helpers

setup() {
  T=$BATS_TEST_TMPDIR
  find_built_into onepassd_bin ONEPASSD server/onepassd ||
    { echo "onepassd not built (build/*/server/onepassd or \$ONEPASSD)" >&2; return 1; }
  command -v testssl >/dev/null || { echo "testssl not installed (apt-get install testssl.sh)" >&2; return 1; }
  # A CA and a leaf for dot.example.test, P-256, as a DoT operator deploys.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 400 \
    -subj /CN=onepass-test-ca -keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=dot.example.test \
    -keyout "$T/key.pem" -out "$T/leaf.csr" 2>/dev/null
  printf '%s\n' 'subjectAltName=DNS:dot.example.test' 'keyUsage=critical,digitalSignature' \
    'extendedKeyUsage=serverAuth' 'authorityInfoAccess=OCSP;URI:http://ocsp.example.test/' \
    > "$T/leaf.ext"
  openssl x509 -req -in "$T/leaf.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
    -days 90 -extfile "$T/leaf.ext" -out "$T/leaf.pem" 2>/dev/null
  cat "$T/leaf.pem" "$T/ca.pem" > "$T/chain.pem"
  head -c 80 /dev/urandom > "$T/ticket.keys"
  "$(cat "$T/onepassd_bin")" --handler dns --listen 127.0.0.1:0 --tls-listen 127.0.0.1:0 \
    --tls-cert "$T/chain.pem" --tls-key "$T/key.pem" --tls-ticket-keys "$T/ticket.keys" \
    --workers 1 --tls-full-per-client 0 --tls-resumed-per-client 0 \
    > "$T/server.out" 2> "$T/server.err" &
  echo $! > "$T/server.pid"
  local _
  for _ in $(seq 1 200); do
    grep -qs '^ready$' "$T/server.out" && break
    kill -0 "$(cat "$T/server.pid")" 2>/dev/null || { cat "$T/server.err" >&2; return 1; }
    sleep 0.05
  done
  grep -q '^ready$' "$T/server.out"
  TLS_PORT=$(sed -n 's/^tls listening on 127.0.0.1://p' "$T/server.out")
}

teardown() {
  if [ -f "$T/server.pid" ]; then kill "$(cat "$T/server.pid")" 2>/dev/null || true; fi
}

@test "testssl.sh finds nothing MEDIUM, HIGH or CRITICAL on the DoT listener" {
  # The certificate's name, as a resolver asks for it (RFC 8310 §8), reached at 127.0.0.1.
  # Every check of a default run (protocols, cipher categories, forward secrecy, server
  # preferences and defaults, vulnerabilities) but the browser client simulation, which makes
  # dozens of handshakes with HTTP clients' ALPN offers and judges nothing of ours.
  run timeout 600 testssl --quiet --color 0 --warnings off --add-ca "$T/ca.pem" \
    --protocols --std --pfs --server-preference --server-defaults --vulnerable \
    --ip 127.0.0.1 --jsonfile "$T/testssl.json" "dot.example.test:$TLS_PORT"
  [ -s "$T/testssl.json" ] || { echo "$output"; false; }
  # Every finding with its severity; the test fails on any MEDIUM, HIGH or CRITICAL one, and
  # prints them.
  run python3 -c '
import json, sys
findings = json.load(open(sys.argv[1]))
bad = [f for f in findings if f.get("severity") in ("MEDIUM", "HIGH", "CRITICAL")]
for f in bad:
    print(f["severity"], f["id"], f.get("finding", ""))
print(len(findings), "findings,", len(bad), "MEDIUM or worse")
sys.exit(1 if bad or not findings else 0)' "$T/testssl.json"
  echo "$output"
  [ "$status" -eq 0 ]
  # What it saw is what the server offers: TLS 1.3 only, the chain trusted.
  python3 -c '
import json, sys
f = {x["id"]: x for x in json.load(open(sys.argv[1]))}
ok = ("offered" in f["TLS1_3"]["finding"] and "not offered" in f["TLS1_2"]["finding"]
      and f["cert_chain_of_trust"]["severity"] == "OK")
print(f["TLS1_3"]["finding"], "|", f["TLS1_2"]["finding"], "|", f["cert_chain_of_trust"]["finding"])
sys.exit(0 if ok else 1)' "$T/testssl.json"
}
