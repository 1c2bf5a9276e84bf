#!/usr/bin/env bash
# Makes a throwaway CA, a few certificates and their PRE-SIGNED OCSP responses with the openssl
# command, the way a CA's offline signer feeds a high-rate responder (RFC 5019 §2.2.1):
#
#   make-ocsp-testdata.sh OUTDIR [DAYS]
#
# OUTDIR gets:
#   ca.pem ca.key                       the CA, which also signs the responses (RFC 6960 §4.2.2.2)
#   good.pem revoked.pem unknown.pem    leaf certificates (+ .key); unknown has no response
#   index.txt                           the `openssl ca` database (good: V, revoked: R)
#   good.req.der revoked.req.der unknown.req.der
#                                       DER OCSPRequests (SHA-1 CertID, no nonce) for each leaf
#   responses/good.der responses/revoked.der
#                                       the pre-signed responses: `onepassd --handler ocsp
#                                       --ocsp-responses OUTDIR/responses` serves them
#
# Responses are valid for DAYS days (default 7: nextUpdate = now + DAYS), certificates for 365.
# Tests run it into temporary directories, scripts/demo.sh and loadtest/bench.sh into their
# scratch folders (the build makes no data set). Nothing it makes is secret or committed.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUTDIR [DAYS]" >&2
  exit 2
fi
out="$1"
days="${2:-7}"
case "$days" in
  '' | *[!0-9]*) echo "$0: DAYS must be a positive integer, got '$days'" >&2; exit 2 ;;
esac

# Build into a scratch directory next to OUTDIR and move it into place at the end, so a reader
# (a running test, the build) never sees a half-made set.
parent=$(dirname "$out")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.ocsp-testdata.XXXXXX")
trap 'rm -rf "$work"' EXIT

cd "$work"
mkdir -p responses newcerts
touch index.txt
echo 1000 >serial
cat >ca.cnf <<'EOF'
[ ca ]
default_ca = testca
[ testca ]
dir = .
database = ./index.txt
new_certs_dir = ./newcerts
serial = ./serial
default_md = sha256
policy = policy_any
unique_subject = no
copy_extensions = none
x509_extensions = leaf_ext
[ policy_any ]
commonName = supplied
[ leaf_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:http://127.0.0.1/
[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
EOF

quiet() { "$@" >/dev/null 2>&1 || { echo "$0: failed: $*" >&2; "$@" >&2; exit 1; }; }

# EC P-256 keys: fast to make and sign with, and what modern CAs use.
newkey() { quiet openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }

newkey ca.key
quiet openssl req -new -x509 -key ca.key -out ca.pem -days 365 -subj "/CN=onepass test CA" \
  -config ca.cnf -extensions ca_ext

for name in good revoked unknown; do
  newkey "$name.key"
  quiet openssl req -new -key "$name.key" -out "$name.csr" -subj "/CN=$name.onepass.test" \
    -config ca.cnf
  quiet openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -days 365 \
    -in "$name.csr" -out "$name.pem" -notext
  rm -f "$name.csr"
done
quiet openssl ca -config ca.cnf -cert ca.pem -keyfile ca.key -revoke revoked.pem \
  -crl_reason keyCompromise

for name in good revoked unknown; do
  # No nonce: a pre-signed response cannot echo one (RFC 5019 §2.1.2).
  quiet openssl ocsp -issuer ca.pem -cert "$name.pem" -no_nonce -reqout "$name.req.der"
done
for name in good revoked; do
  quiet openssl ocsp -index index.txt -CA ca.pem -rsigner ca.pem -rkey ca.key \
    -reqin "$name.req.der" -ndays "$days" -respout "responses/$name.der"
done

rm -rf newcerts serial* index.txt.* ca.cnf
# Replace OUTDIR as a whole (rename of a directory onto a non-empty one fails, hence the dance).
if [ -e "$out" ]; then
  old="$work.old"
  mv "$out" "$old"
  mv "$work" "$out"
  rm -rf "$old"
else
  mv "$work" "$out"
fi
trap - EXIT
echo "make-ocsp-testdata: wrote $out (responses valid $days days)"
