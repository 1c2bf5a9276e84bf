#ifndef ONEPASS_TESTS_SUPPORT_LOOPBACK_PORT_H_
#define ONEPASS_TESTS_SUPPORT_LOOPBACK_PORT_H_

namespace onepass::testing {

// A port on 127.0.0.1 that was free for both TCP and UDP at the time of the call, taken from
// below the kernel's ephemeral range (net.ipv4.ip_local_port_range), where neither an outgoing
// connection nor an unbound UDP socket's send can take it before the caller binds it: a port
// from bind(0) is ephemeral, and a test beside this one (a frontend's upstream UDP sockets, a
// load test's clients) could take it in between. CI's run of dba9ef4 lost unbound's start to
// that. -1 when no free port was found in 200 tries.
int FreeLoopbackPort();

// The same, drawn from first..last (the tests of the draw).
int FreeLoopbackPortIn(int first, int last);

// Whether 127.0.0.1:`port` can be bound now for TCP and for UDP (the check of each draw).
bool FreeForTcpAndUdp(int port);

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_LOOPBACK_PORT_H_
