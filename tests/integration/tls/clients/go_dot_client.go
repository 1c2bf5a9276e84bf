// go_dot_client: DNS over TLS (RFC 7858) with Go's crypto/tls, for the interop test.
//
//	go_dot_client HOST PORT SNI CA_FILE SUITE GROUP MODE
//
// SUITE is an IANA name (TLS_AES_128_GCM_SHA256, ...); Go 1.19 does not let a client choose its
// TLS 1.3 suites, so the server's --tls-ciphersuites forces it and this only checks the result.
// GROUP is X25519 or P-256. MODE: full, resume (a second connection from the first one's
// ticket, which must be resumed) or hrr. Go 1.19 sends a key share only for its first curve
// preference, and every curve it has (X25519, P-256, P-384, P-521) is one OpenSSL's server takes
// from the share it is given, so Go cannot make that server send a HelloRetryRequest: hrr runs
// with curve preferences P-384 then GROUP, a handshake that may or may not retry (not reported
// by crypto/tls). Prints one "key=value" line per connection; exit 0 when every connection
// negotiated TLS 1.3, the suite, ALPN "dot" and got a NOERROR answer with records.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func query() []byte {
	q := []byte{0, 0, 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	q = append(q, 3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1)
	binary.BigEndian.PutUint16(q, uint16(len(q)-2))
	return q
}

func exchange(addr string, cfg *tls.Config) (tls.ConnectionState, int, int, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, 0, 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(query()); err != nil {
		return tls.ConnectionState{}, 0, 0, err
	}
	var length [2]byte
	if _, err := io.ReadFull(conn, length[:]); err != nil {
		return tls.ConnectionState{}, 0, 0, err
	}
	answer := make([]byte, binary.BigEndian.Uint16(length[:]))
	if _, err := io.ReadFull(conn, answer); err != nil || len(answer) < 12 {
		return tls.ConnectionState{}, 0, 0, fmt.Errorf("short answer: %v", err)
	}
	// The server's ticket came before the answer (RFC 8446 §4.6.1: after its Finished), so
	// the session is in the cache already; not waiting for the close keeps each run short.
	return conn.ConnectionState(), int(answer[3] & 0xf), int(binary.BigEndian.Uint16(answer[6:])), nil
}

func main() {
	if len(os.Args) != 8 {
		fmt.Fprintln(os.Stderr, "usage: go_dot_client HOST PORT SNI CA_FILE SUITE GROUP MODE")
		os.Exit(2)
	}
	host, port, sni, caFile, suite, group, mode := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6], os.Args[7]
	pem, err := os.ReadFile(caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	curve := map[string]tls.CurveID{"X25519": tls.X25519, "P-256": tls.CurveP256}[group]
	if curve == 0 {
		fmt.Fprintln(os.Stderr, "unknown group", group)
		os.Exit(2)
	}
	cfg := &tls.Config{
		ServerName: sni, RootCAs: roots, NextProtos: []string{"dot"},
		MinVersion: tls.VersionTLS13, CurvePreferences: []tls.CurveID{curve},
		ClientSessionCache: tls.NewLRUClientSessionCache(4),
	}
	if mode == "hrr" {
		cfg.CurvePreferences = []tls.CurveID{tls.CurveP384, curve}
	}
	connections := 1
	if mode == "resume" {
		connections = 2
	}
	for i := 0; i < connections; i++ {
		state, rcode, ancount, err := exchange(net.JoinHostPort(host, port), cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "connection", i, err)
			os.Exit(1)
		}
		version := "other"
		if state.Version == tls.VersionTLS13 {
			version = "TLSv1.3"
		}
		name := tls.CipherSuiteName(state.CipherSuite)
		fmt.Printf("version=%s suite=%s group=unreported resumed=%v hrr=unreported alpn=%s rcode=%d ancount=%d\n",
			version, name, state.DidResume, state.NegotiatedProtocol, rcode, ancount)
		if version != "TLSv1.3" || name != suite || state.NegotiatedProtocol != "dot" || rcode != 0 || ancount < 1 {
			os.Exit(1)
		}
		if mode == "resume" && state.DidResume != (i == 1) {
			fmt.Fprintln(os.Stderr, "resumption: want", i == 1)
			os.Exit(1)
		}
	}
}
