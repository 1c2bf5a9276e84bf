// RFC 8448 messages the wire tests need beyond tests/unit/server/tls/tls13/crypto/
// rfc8448_simple.h (§3's ClientHello, ServerHello and server flight), as the RFC prints them.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_WIRE_RFC8448_MESSAGES_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_WIRE_RFC8448_MESSAGES_H_

namespace onepass::tls::tls13::testing {

// §3, {server} create an ephemeral x25519 key pair: public key; and the ServerHello's random.
inline constexpr char kRfc8448ServerRandom[] =
    "a6 af 06 a4 12 18 60 dc 5e 6e 60 24 9c d3 4c 95 93 0c 8a c5 cb 14 34 da c1 55 77 2e d3 e2"
    "69 28";
inline constexpr char kRfc8448ServerPublicKey[] =
    "c9 82 88 76 11 20 95 fe 66 76 2b db f7 c6 72 e1 56 d6 cc 25 3b 83 3d f1 dd 69 b1 b0 4e 75"
    "1f 0f";

// §3, {client} construct a Finished handshake message.
inline constexpr char kRfc8448ClientFinished[] =
    "14 00 00 20 a8 ec 43 6d 67 76 34 ae 52 5a c1 fc eb e1 1a 03 9e c1 76 94 fa c6 e9 85 27 b6"
    "42 f2 ed d5 ce 61";

// §3, {server} construct a NewSessionTicket handshake message (with early_data, 0x400).
inline constexpr char kRfc8448NewSessionTicket[] =
    "04 00 00 c9 00 00 00 1e fa d6 aa c5 02 00 00 00 b2 2c 03 5d 82 93 59 ee 5f f7 af 4e c9 00"
    "00 00 00 26 2a 64 94 dc 48 6d 2c 8a 34 cb 33 fa 90 bf 1b 00 70 ad 3c 49 88 83 c9 36 7c 09"
    "a2 be 78 5a bc 55 cd 22 60 97 a3 a9 82 11 72 83 f8 2a 03 a1 43 ef d3 ff 5d d3 6d 64 e8 61"
    "be 7f d6 1d 28 27 db 27 9c ce 14 50 77 d4 54 a3 66 4d 4e 6d a4 d2 9e e0 37 25 a6 a4 da fc"
    "d0 fc 67 d2 ae a7 05 29 51 3e 3d a2 67 7f a5 90 6c 5b 3f 7d 8f 92 f2 28 bd a4 0d da 72 14"
    "70 f9 fb f2 97 b5 ae a6 17 64 6f ac 5c 03 27 2e 97 07 27 c6 21 a7 91 41 ef 5f 7d e6 50 5e"
    "5b fb c3 88 e9 33 43 69 40 93 93 4a e4 d3 57 00 08 00 2a 00 04 00 00 04 00";

// §4 (resumed 0-RTT handshake), {server} construct a ServerHello: pre_shared_key with
// selected_identity 0, then key_share and supported_versions.
inline constexpr char kRfc8448ResumedServerRandom[] =
    "3c cf d2 de c8 90 22 27 63 47 2a e8 13 67 77 c9 d7 35 87 77 bb 66 e9 1e a5 12 24 95 f5 59"
    "ea 2d";
inline constexpr char kRfc8448ResumedServerPublicKey[] =
    "12 17 61 ee 42 c3 33 e1 b9 e7 7b 60 dd 57 c2 05 3c d9 45 12 ab 47 f1 15 e8 6e ff 50 94 2c"
    "ea 31";
inline constexpr char kRfc8448ResumedServerHello[] =
    "02 00 00 5c 03 03 3c cf d2 de c8 90 22 27 63 47 2a e8 13 67 77 c9 d7 35 87 77 bb 66 e9 1e"
    "a5 12 24 95 f5 59 ea 2d 00 13 01 00 00 34 00 29 00 02 00 00 00 33 00 24 00 1d 00 20 12 17"
    "61 ee 42 c3 33 e1 b9 e7 7b 60 dd 57 c2 05 3c d9 45 12 ab 47 f1 15 e8 6e ff 50 94 2c ea 31"
    "00 2b 00 02 03 04";

// §5 (HelloRetryRequest), {server} construct a ServerHello (the HRR, 176 octets): key_share
// selecting secp256r1, a 114-byte cookie, supported_versions.
inline constexpr char kRfc8448HelloRetryRequest[] =
    "02 00 00 ac 03 03 cf 21 ad 74 e5 9a 61 11 be 1d 8c 02 1e 65 b8 91 c2 a2 11 16 7a bb 8c 5e"
    "07 9e 09 e2 c8 a8 33 9c 00 13 01 00 00 84 00 33 00 02 00 17 00 2c 00 74 00 72 71 dc d0 4b"
    "b8 8b c3 18 91 19 39 8a 00 00 00 00 ee fa fc 76 c1 46 b8 23 b0 96 f8 aa ca d3 65 dd 00 30"
    "95 3f 4e df 62 56 36 e5 f2 1b b2 e2 3f cc 65 4b 1b 5b 40 31 8d 10 d1 37 ab cb b8 75 74 e3"
    "6e 8a 1f 02 5f 7d fa 5d 6e 50 78 1b 5e da 4a a1 5b 0c 8b e7 78 25 7d 16 aa 30 30 e9 e7 84"
    "1d d9 e4 c0 34 22 67 e8 ca 0c af 57 1f b2 b7 cf f0 f9 34 b0 00 2b 00 02 03 04";

}  // namespace onepass::tls::tls13::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_WIRE_RFC8448_MESSAGES_H_
