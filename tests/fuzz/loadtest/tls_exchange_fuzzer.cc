// Fuzzes the load tester's DNS-over-TLS machine (loadtest/tls_exchange.h) with hostile server
// bytes after its ClientHello: no crash, no leak, and every connection is counted exactly once
// (ok or one error kind), however the bytes are cut and whatever ends the connection.
//
// Input: byte 0 low nibble + 1 is the piece size the bytes arrive in (1..16), bit 4 picks
// how the connection ends after them (the server's close or the timeout), bit 5 asks for three
// queries per connection; the rest is what the server sends.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "loadtest/dns_request.h"
#include "loadtest/exchange.h"
#include "loadtest/tls_client_context.h"
#include "loadtest/tls_exchange.h"

namespace {

using onepass::load::DnsClient;
using onepass::load::Exchange;
using onepass::load::ExchangeConfig;
using onepass::load::RequestSource;
using onepass::load::ThreadStats;
using onepass::load::TicketStore;
using onepass::load::TlsClientContext;
using onepass::load::TlsClientOptions;
using onepass::load::TlsExchange;

struct Shared {
  std::unique_ptr<DnsClient> dns;
  std::unique_ptr<TlsClientContext> context;
  Shared() {
    dns = std::move(*DnsClient::Create({{"www.example.com.", "A"}}, {}));
    TlsClientOptions options;
    options.insecure = true;  // no certificate can be forged here; verification is unit-tested
    options.sni = "dot.example.test";
    options.resume_fraction = 1;
    context = std::move(*TlsClientContext::Create(options));
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Shared* shared = new Shared();
  if (size < 1) return 0;
  const size_t piece = (data[0] & 0x0F) + 1;
  const bool close_at_end = (data[0] & 0x10) != 0;
  ExchangeConfig config;
  config.queries_per_conn = (data[0] & 0x20) != 0 ? 3 : 1;
  config.max_response_bytes = 4096;
  RequestSource requests(shared->dns.get(), 1);
  TicketStore tickets(1);
  ThreadStats stats;
  TlsExchange tls(shared->context.get(), &tickets, Exchange(&config, &requests, &stats), &stats);
  tls.Begin(0, 0);
  tls.OnConnected(0, 1);
  tls.OnSent(tls.unsent().size(), 2);
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  for (size_t at = 0; at < bytes.size() && tls.active(); at += piece) {
    tls.OnReceived(absl::string_view(bytes).substr(at, piece), 3);
    tls.OnSent(tls.unsent().size(), 4);
  }
  if (close_at_end) {
    tls.OnPeerClosed(5);
  } else {
    tls.OnTimeout(5);
  }
  if (tls.active() || stats.started != 1 || stats.ok + stats.errors_total() != 1) std::abort();
  return 0;
}
