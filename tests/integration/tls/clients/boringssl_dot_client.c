// boringssl_dot_client: DNS over TLS (RFC 7858) with BoringSSL (Debian's android-libboringssl),
// for the interop test. Its own program: BoringSSL's symbols clash with OpenSSL's.
//
//   boringssl_dot_client HOST PORT SNI CA_FILE SUITE GROUP MODE
//
// BoringSSL cannot choose its TLS 1.3 suites: the server's --tls-ciphersuites forces SUITE and
// this checks it. GROUP (X25519 or P-256) is offered alone. MODE: full; resume (a second
// connection from the first one's ticket, which must be resumed); hrr (groups P-384 then GROUP,
// a share for P-384 only: OpenSSL's server takes that share, so no retry happens against it,
// a gap; the line reports hrr= from SSL_used_hello_retry_request all the same). Exit 0 when each
// connection negotiated TLS 1.3, the suite, the group, ALPN "dot" and a NOERROR answer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static const unsigned char kQuery[] = {0,   33,  0x12, 0x34, 0x01, 0x00, 0, 1,   0,   0,   0,   0,
                                       0,   0,   3,    'w',  'w',  'w',  7, 'e', 'x', 'a', 'm', 'p',
                                       'l', 'e', 3,    'c',  'o',  'm',  0, 0,   1,   0,   1};

static SSL_SESSION* g_ticket = NULL;  // the newest ticket's session (one thread)

static int NewSession(SSL* ssl, SSL_SESSION* session) {
  (void)ssl;
  if (g_ticket != NULL) SSL_SESSION_free(g_ticket);
  g_ticket = session;
  return 1;  // kept
}

static int Connect(const char* host, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)port);
  struct timeval tv = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1 ||
      connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0) {
    perror("connect");
    exit(1);
  }
  return fd;
}

static int ReadFull(SSL* ssl, unsigned char* out, int n) {
  for (int got = 0; got < n;) {
    int r = SSL_read(ssl, out + got, n - got);
    if (r <= 0) return -1;
    got += r;
  }
  return 0;
}

static void Exchange(SSL_CTX* ctx, char** argv, int want_resumed) {
  SSL* ssl = SSL_new(ctx);
  int fd = Connect(argv[1], atoi(argv[2]));
  SSL_set_fd(ssl, fd);
  SSL_set_tlsext_host_name(ssl, argv[3]);
  SSL_set1_host(ssl, argv[3]);
  if (want_resumed) SSL_set_session(ssl, g_ticket);
  if (SSL_connect(ssl) != 1) {
    fprintf(stderr, "handshake failed\n");
    exit(1);
  }
  if (SSL_write(ssl, kQuery, sizeof kQuery) != (int)sizeof kQuery) exit(1);
  unsigned char length[2];
  unsigned char answer[4096];
  if (ReadFull(ssl, length, 2) != 0) exit(1);
  int n = length[0] << 8 | length[1];
  if (n < 12 || n > (int)sizeof answer || ReadFull(ssl, answer, n) != 0) exit(1);
  const unsigned char* protocol = NULL;
  unsigned protocol_size = 0;
  SSL_get0_alpn_selected(ssl, &protocol, &protocol_size);
  const char* version = SSL_get_version(ssl);
  const char* suite = SSL_CIPHER_standard_name(SSL_get_current_cipher(ssl));
  const char* curve = SSL_get_curve_name(SSL_get_curve_id(ssl));
  int resumed = SSL_session_reused(ssl);
  int rcode = answer[3] & 0xf;
  int ancount = answer[6] << 8 | answer[7];
  printf("version=%s suite=%s group=%s resumed=%s hrr=%s alpn=%.*s rcode=%d ancount=%d\n", version,
         suite, curve ? curve : "none", resumed ? "true" : "false",
         SSL_used_hello_retry_request(ssl) ? "yes" : "no", (int)protocol_size,
         protocol ? (const char*)protocol : "", rcode, ancount);
  const int hrr = strcmp(argv[7], "hrr") == 0;
  if (strcmp(version, "TLSv1.3") != 0 || strcmp(suite, argv[5]) != 0 ||
      (!hrr && (curve == NULL || strcmp(curve, argv[6]) != 0)) || protocol_size != 3 ||
      memcmp(protocol, "dot", 3) != 0 || rcode != 0 || ancount < 1 || resumed != want_resumed) {
    exit(1);
  }
  SSL_shutdown(ssl);
  SSL_free(ssl);
  close(fd);
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: boringssl_dot_client HOST PORT SNI CA_FILE SUITE GROUP MODE\n");
    return 2;
  }
  if (strcmp(argv[6], "X25519") != 0 && strcmp(argv[6], "P-256") != 0) return 2;
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  if (SSL_CTX_load_verify_locations(ctx, argv[4], NULL) != 1) return 1;
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  static const unsigned char kAlpn[] = {3, 'd', 'o', 't'};
  SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof kAlpn);
  char groups[64];
  snprintf(groups, sizeof groups, "%s%s", strcmp(argv[7], "hrr") == 0 ? "P-384:" : "", argv[6]);
  if (SSL_CTX_set1_curves_list(ctx, groups) != 1) return 1;
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
  SSL_CTX_sess_set_new_cb(ctx, NewSession);
  Exchange(ctx, argv, 0);
  if (strcmp(argv[7], "resume") == 0) {
    if (g_ticket == NULL) {
      fprintf(stderr, "no ticket\n");
      return 1;
    }
    Exchange(ctx, argv, 1);
  }
  SSL_CTX_free(ctx);
  return 0;
}
