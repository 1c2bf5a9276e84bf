#!/usr/bin/env python3
"""python_dot_client: DNS over TLS (RFC 7858) with Python's ssl module, for the interop test.

    python_dot_client.py HOST PORT SNI CA_FILE SUITE GROUP MODE

OpenSSL is underneath, but the client stack above it (socket wrapping, verification set-up,
session reuse through SSLSocket.session) is Python's. SUITE is an IANA name: Python 3.11's ssl
cannot choose TLS 1.3 suites (set_ciphers is TLS 1.2 and below), so the server's
--tls-ciphersuites forces it and this checks the result. GROUP is X25519 or P-256: before 3.13
Python has no way to set the groups list; set_ecdh_curve (OpenSSL's SSL_CTX_set_tmp_ecdh, which
in OpenSSL 3 makes that curve the only group, TLS 1.3 included) takes named EC curves only, so
P-256 is offered alone and X25519 runs with OpenSSL's default list (X25519 first). Python cannot
report the negotiated group (group=unreported) nor whether a HelloRetryRequest happened, and
cannot send a share the server will refuse: hrr is a gap, run as a full handshake that must
succeed (hrr=unreported). MODE: full, resume (a second connection from the first one's session,
which must be resumed) or hrr. Prints one "key=value" line per connection; exit 0 when every
connection negotiated TLS 1.3, the suite, ALPN "dot" and got a NOERROR answer with records.
"""

import socket
import ssl
import sys

import dot_wire


def read_exactly(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise ConnectionError("short answer")
        data += chunk
    return data


def exchange(host, port, sni, ctx, session):
    with socket.create_connection((host, port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname=sni, session=session) as conn:
            conn.sendall(dot_wire.FRAMED_QUERY)
            prefix = read_exactly(conn, 2)
            answer = read_exactly(conn, dot_wire.framed_length(prefix) - 2)
            rcode, ancount = dot_wire.rcode_and_ancount(answer)
            # The server's ticket came before the answer (RFC 8446 §4.6.1: after its
            # Finished), so conn.session holds it now.
            return (conn.version(), conn.cipher()[0], conn.selected_alpn_protocol(),
                    conn.session_reused, conn.session, rcode, ancount)


def main(argv):
    if len(argv) != 8:
        print("usage: python_dot_client.py HOST PORT SNI CA_FILE SUITE GROUP MODE",
              file=sys.stderr)
        return 2
    host, port, sni, ca_file, suite, group, mode = argv[1:]
    if group not in ("X25519", "P-256"):
        print("unknown group", group, file=sys.stderr)
        return 2
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(cafile=ca_file)
    ctx.set_alpn_protocols(["dot"])
    if group == "P-256":
        ctx.set_ecdh_curve("prime256v1")
    session = None
    for i in range(2 if mode == "resume" else 1):
        try:
            version, name, alpn, resumed, session, rcode, ancount = exchange(
                host, int(port), sni, ctx, session)
        except (OSError, ValueError) as error:
            print("connection", i, error, file=sys.stderr)
            return 1
        version = "TLSv1.3" if version == "TLSv1.3" else "other"
        print(f"version={version} suite={name} group=unreported "
              f"resumed={'true' if resumed else 'false'} hrr=unreported alpn={alpn} "
              f"rcode={rcode} ancount={ancount}")
        if (version != "TLSv1.3" or name != suite or alpn != "dot" or rcode != 0 or
                ancount < 1):
            return 1
        if mode == "resume" and resumed != (i == 1):
            print("resumption: want", i == 1, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
