#!/usr/bin/env bash
# Regenerates the OCSP fixtures of ocsp_request_test.cc with the openssl CLI (run once; the
# outputs are committed so the tests need no openssl binary).
#   request.der        OCSPRequest for leaf.pem (no nonce)
#   response.der       successful, signed by the CA, answering request.der ("good")
#   other_response.der successful, answering a different certificate (other.pem)
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/ca.key" -out "$work/ca.pem" \
  -subj "/CN=onepass-load test CA" -days 36500 2>/dev/null
for name in leaf other; do
  openssl req -newkey rsa:2048 -nodes -keyout "$work/$name.key" -out "$work/$name.csr" \
    -subj "/CN=$name.example" 2>/dev/null
  openssl x509 -req -in "$work/$name.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
    -set_serial "0x$(openssl rand -hex 8)" -out "$work/$name.pem" -days 36500 2>/dev/null
done
: > "$work/index.txt"
for name in leaf other; do
  serial=$(openssl x509 -in "$work/$name.pem" -noout -serial | cut -d= -f2)
  printf 'V\t21000101000000Z\t\t%s\tunknown\t/CN=%s.example\n' "$serial" "$name" >> "$work/index.txt"
done
openssl ocsp -issuer "$work/ca.pem" -cert "$work/leaf.pem" -no_nonce -reqout request.der
openssl ocsp -issuer "$work/ca.pem" -cert "$work/other.pem" -no_nonce -reqout "$work/other.der"
openssl ocsp -index "$work/index.txt" -rsigner "$work/ca.pem" -rkey "$work/ca.key" -CA "$work/ca.pem" \
  -reqin request.der -respout response.der -ndays 36500 >/dev/null
openssl ocsp -index "$work/index.txt" -rsigner "$work/ca.pem" -rkey "$work/ca.key" -CA "$work/ca.pem" \
  -reqin "$work/other.der" -respout other_response.der -ndays 36500 >/dev/null
