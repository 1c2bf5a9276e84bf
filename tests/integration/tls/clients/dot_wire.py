"""dot_wire: the DNS over TLS bytes the interop test's Python clients and tool wrappers share.

One query (www.example.com A, ID 0x1234, RD) with its RFC 7858 §3.3 two-byte length, and the
answer's RCODE and ANCOUNT read back from a framed answer (RFC 1035 §4.1.1).
"""

import struct

QUERY = (bytes([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]) +
         b"\x03www\x07example\x03com\x00" + bytes([0, 1, 0, 1]))
FRAMED_QUERY = struct.pack("!H", len(QUERY)) + QUERY


def framed_length(data):
    """The whole framed answer's length once its 2-byte prefix is in `data`, else None."""
    if len(data) < 2:
        return None
    return 2 + struct.unpack("!H", data[:2])[0]


def rcode_and_ancount(message):
    """(RCODE, ANCOUNT) of an unframed DNS message; ValueError if shorter than a header."""
    if len(message) < 12:
        raise ValueError("short answer")
    return message[3] & 0xF, struct.unpack("!H", message[6:8])[0]
