// The operations listener (--metrics-listen): a minimal HTTP/1.x server on its own thread and
// its own event_base, never a worker's, for GET /metrics, /healthz and /readyz
// (server/ops/ops_endpoints.h says what they answer). It knows HTTP only as far as a scraper or a
// load-balancer probe needs: one GET per connection, answered whole, then closed.
//
// Bounded like the data path: at most kMaxOpsConnections at once, a request head of at most
// kMaxOpsRequestBytes, and kOpsTimeout for the whole exchange from accept to the last byte of
// the reply (one deadline, never extended by a byte that arrives), so a slow or hostile peer
// on this port cannot hold the thread. A connection that comes while the table is full takes
// the slot of the oldest one still reading its request (slowloris: a peer that dribbles or
// sends nothing), so that a health check is answered even while 16 slow peers hold every
// slot; the newest connection is the last to be evicted, and a probe's exchange lasts
// milliseconds.
#ifndef ONEPASS_SERVER_OPS_METRICS_SERVER_H_
#define ONEPASS_SERVER_OPS_METRICS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/scoped_fd.h"
#include "common/socket_address.h"

struct event;
struct event_base;

namespace onepass {

inline constexpr int kMaxOpsConnections = 16;
inline constexpr size_t kMaxOpsRequestBytes = 8 * 1024;
inline constexpr absl::Duration kOpsTimeout = absl::Seconds(5);

struct MetricsServerOptions {
  int max_connections = kMaxOpsConnections;
  absl::Duration exchange_timeout = kOpsTimeout;  // accept to the reply's last byte
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Called on the metrics thread with the request's method and path (the query string removed).
using HttpRoute = std::function<HttpReply(absl::string_view method, absl::string_view path)>;

// The method and path of a request head ("GET /metrics?x HTTP/1.1\r\n..." → "GET",
// "/metrics"). False while the head is incomplete; `valid` false for one that is not
// HTTP/1.x.
bool ParseHttpRequestHead(absl::string_view head, bool& valid, std::string& method,
                          std::string& path);

class MetricsServer {
 public:
  // Binds and listens on `address` (port 0: any free one). Nothing is served before Start.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Create(const SocketAddress& address,
                                                               HttpRoute route,
                                                               MetricsServerOptions options = {});
  ~MetricsServer();  // Stop()s
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  const SocketAddress& address() const { return address_; }
  // Starts the thread. Call once.
  void Start();
  // Any thread: ends the thread (connections open are closed) and joins it.
  void Stop();

 private:
  struct Exchange;  // one connection: its bytes, its I/O event and its deadline timer

  MetricsServer() = default;
  static void OnAccept(int fd, short what, void* arg);
  static void OnStop(int fd, short what, void* arg);
  static void OnExchange(int fd, short what, void* arg);
  static void OnDeadline(int fd, short what, void* arg);
  // After `fresh` (just accepted, the last) took a slot: over the cap, the oldest exchange still
  // reading (else the oldest) other than `fresh` is closed.
  void MakeRoom(const Exchange* fresh);
  void Finish(Exchange* exchange);

  SocketAddress address_;
  HttpRoute route_;
  MetricsServerOptions options_;
  ScopedFd listener_;
  ScopedFd stop_fd_;
  std::unique_ptr<event_base, void (*)(event_base*)> base_{nullptr, nullptr};
  std::unique_ptr<event, void (*)(event*)> accept_event_{nullptr, nullptr};
  std::unique_ptr<event, void (*)(event*)> stop_event_{nullptr, nullptr};
  std::vector<std::unique_ptr<Exchange>> exchanges_;  // oldest first; the metrics thread only
  std::thread thread_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_OPS_METRICS_SERVER_H_
