// wolfssl_dot_client: DNS over TLS (RFC 7858) with wolfSSL, for the interop test.
//
//   wolfssl_dot_client HOST PORT SNI CA_FILE SUITE GROUP MODE
//
// SUITE is an IANA name, GROUP X25519 or P-256, both offered alone. MODE: full; resume (a second
// connection from the first one's ticket, which must be resumed); hrr (supported_groups offered
// with no key share at all, wolfSSL_NoKeyShares, so the server must send a HelloRetryRequest;
// wolfSSL does not report that it got one, so the line says hrr=unreported). Prints one
// "key=value" line per connection; exit 0 when each negotiated TLS 1.3, the suite, the group,
// ALPN "dot" and got a NOERROR answer with records.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

static const unsigned char kQuery[] = {0,   33,  0x12, 0x34, 0x01, 0x00, 0, 1,   0,   0,   0,   0,
                                       0,   0,   3,    'w',  'w',  'w',  7, 'e', 'x', 'a', 'm', 'p',
                                       'l', 'e', 3,    'c',  'o',  'm',  0, 0,   1,   0,   1};

// wolfSSL's name for an IANA suite name (RFC 8446 §B.4).
static const char* WolfSuite(const char* iana) {
  if (strcmp(iana, "TLS_AES_128_GCM_SHA256") == 0) return "TLS13-AES128-GCM-SHA256";
  if (strcmp(iana, "TLS_AES_256_GCM_SHA384") == 0) return "TLS13-AES256-GCM-SHA384";
  if (strcmp(iana, "TLS_CHACHA20_POLY1305_SHA256") == 0) return "TLS13-CHACHA20-POLY1305-SHA256";
  exit(2);
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

static int ReadFull(WOLFSSL* ssl, unsigned char* out, int n) {
  for (int got = 0; got < n;) {
    int r = wolfSSL_read(ssl, out + got, n - got);
    if (r <= 0) return -1;
    got += r;
  }
  return 0;
}

// One connection, one query; returns the session to resume from (the caller frees it).
static WOLFSSL_SESSION* Exchange(WOLFSSL_CTX* ctx, char** argv, WOLFSSL_SESSION* resume,
                                 int want_resumed) {
  const char* suite = argv[5];
  const char* group = argv[6];
  int group_id = strcmp(group, "X25519") == 0  ? WOLFSSL_ECC_X25519
                 : strcmp(group, "P-256") == 0 ? WOLFSSL_ECC_SECP256R1
                                               : 0;
  if (group_id == 0) exit(2);
  WOLFSSL* ssl = wolfSSL_new(ctx);
  int fd = Connect(argv[1], atoi(argv[2]));
  wolfSSL_set_fd(ssl, fd);
  wolfSSL_UseSNI(ssl, WOLFSSL_SNI_HOST_NAME, argv[3], (unsigned short)strlen(argv[3]));
  wolfSSL_check_domain_name(ssl, argv[3]);
  char alpn[] = "dot";
  wolfSSL_UseALPN(ssl, alpn, sizeof alpn - 1, WOLFSSL_ALPN_FAILED_ON_MISMATCH);
  wolfSSL_set_groups(ssl, &group_id, 1);
  if (wolfSSL_set_cipher_list(ssl, WolfSuite(suite)) != WOLFSSL_SUCCESS) exit(1);
  if (strcmp(argv[7], "hrr") == 0) {
    if (wolfSSL_NoKeyShares(ssl) != WOLFSSL_SUCCESS) exit(1);
  } else {
    if (wolfSSL_UseKeyShare(ssl, (unsigned short)group_id) != WOLFSSL_SUCCESS) exit(1);
  }
  if (resume != NULL) wolfSSL_set_session(ssl, resume);
  if (wolfSSL_connect(ssl) != WOLFSSL_SUCCESS) {
    fprintf(stderr, "handshake: error %d\n", wolfSSL_get_error(ssl, 0));
    exit(1);
  }
  if (wolfSSL_write(ssl, kQuery, sizeof kQuery) != (int)sizeof kQuery) exit(1);
  unsigned char length[2];
  unsigned char answer[4096];
  if (ReadFull(ssl, length, 2) != 0) exit(1);
  int n = length[0] << 8 | length[1];
  if (n < 12 || n > (int)sizeof answer || ReadFull(ssl, answer, n) != 0) exit(1);
  char* protocol = NULL;
  unsigned short protocol_size = 0;
  wolfSSL_ALPN_GetProtocol(ssl, &protocol, &protocol_size);
  const char* version = wolfSSL_get_version(ssl);
  const char* curve = wolfSSL_get_curve_name(ssl);
  const char* got_suite =
      strcmp(wolfSSL_get_cipher_name(ssl), WolfSuite(suite)) == 0 ? suite : "other";
  int resumed = wolfSSL_session_reused(ssl);
  int rcode = answer[3] & 0xf;
  int ancount = answer[6] << 8 | answer[7];
  printf("version=%s suite=%s group=%s resumed=%s hrr=unreported alpn=%.*s rcode=%d ancount=%d\n",
         version, got_suite, curve ? curve : "none", resumed ? "true" : "false", (int)protocol_size,
         protocol ? protocol : "", rcode, ancount);
  // wolfSSL names P-256 SECP256R1.
  const char* want_curve = group_id == WOLFSSL_ECC_X25519 ? "X25519" : "SECP256R1";
  if (strcmp(version, "TLSv1.3") != 0 || strcmp(got_suite, suite) != 0 ||
      (!resumed && (curve == NULL || strcmp(curve, want_curve) != 0)) || protocol_size != 3 ||
      memcmp(protocol, "dot", 3) != 0 || rcode != 0 || ancount < 1 || resumed != want_resumed) {
    exit(1);
  }
  WOLFSSL_SESSION* session = wolfSSL_get1_session(ssl);
  wolfSSL_shutdown(ssl);
  wolfSSL_free(ssl);
  close(fd);
  return session;
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: wolfssl_dot_client HOST PORT SNI CA_FILE SUITE GROUP MODE\n");
    return 2;
  }
  wolfSSL_Init();
  WOLFSSL_CTX* ctx = wolfSSL_CTX_new(wolfTLSv1_3_client_method());
  if (ctx == NULL || wolfSSL_CTX_load_verify_locations(ctx, argv[4], NULL) != WOLFSSL_SUCCESS) {
    return 1;
  }
  wolfSSL_CTX_set_verify(ctx, WOLFSSL_VERIFY_PEER, NULL);
  WOLFSSL_SESSION* session = Exchange(ctx, argv, NULL, 0);
  if (strcmp(argv[7], "resume") == 0) {
    WOLFSSL_SESSION* again = Exchange(ctx, argv, session, 1);
    wolfSSL_SESSION_free(again);
  }
  wolfSSL_SESSION_free(session);
  wolfSSL_CTX_free(ctx);
  wolfSSL_Cleanup();
  return 0;
}
