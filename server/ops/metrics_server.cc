#include "server/ops/metrics_server.h"

#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/libevent_free.h"
#include "common/log.h"

namespace onepass {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string Render(const HttpReply& reply, bool head_only) {
  std::string text = absl::StrCat("HTTP/1.1 ", reply.status, " ", Reason(reply.status),
                                  "\r\nContent-Type: ", reply.content_type,
                                  "\r\nContent-Length: ", reply.body.size(),
                                  "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n");
  if (!head_only) text += reply.body;
  return text;
}

}  // namespace

bool ParseHttpRequestHead(absl::string_view head, bool& valid, std::string& method,
                          std::string& path) {
  valid = true;
  const size_t end = head.find("\r\n\r\n");
  const size_t bare_end = head.find("\n\n");  // lenient: some probes send bare LFs
  if (end == absl::string_view::npos && bare_end == absl::string_view::npos) return false;
  absl::string_view line = head.substr(0, head.find('\n'));
  if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
  // RFC 9112 §3: method SP request-target SP HTTP-version.
  const size_t first = line.find(' ');
  const size_t last = line.rfind(' ');
  if (first == absl::string_view::npos || last == first ||
      !absl::StartsWith(line.substr(last + 1), "HTTP/1.")) {
    valid = false;
    return true;
  }
  method = std::string(line.substr(0, first));
  absl::string_view target = line.substr(first + 1, last - first - 1);
  target = target.substr(0, target.find('?'));
  path = std::string(target);
  return true;
}

struct MetricsServer::Exchange {
  MetricsServer* server = nullptr;
  ScopedFd fd;
  std::unique_ptr<event, void (*)(event*)> ev{nullptr, FreeEvent};
  // One-shot, armed once at accept: the I/O event has no timeout of its own, because
  // libevent re-arms a persistent event's timeout each time it fires, which would let a peer
  // sending a byte every few seconds keep its slot for ever.
  std::unique_ptr<event, void (*)(event*)> deadline{nullptr, FreeEvent};
  std::string in;
  std::string out;
  size_t sent = 0;
  bool writing = false;
};

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Create(const SocketAddress& address,
                                                                     HttpRoute route,
                                                                     MetricsServerOptions options) {
  if (options.max_connections <= 0 || options.exchange_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "the metrics listener needs room for a connection and a positive timeout");
  }
  auto server = std::unique_ptr<MetricsServer>(new MetricsServer());
  server->route_ = std::move(route);
  server->options_ = options;
  const std::string where = address.ToString();
  server->listener_.Reset(
      socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
  if (!server->listener_.valid()) {
    return absl::InternalError(
        absl::StrCat("--metrics-listen ", where, ": socket: ", std::strerror(errno)));
  }
  int one = 1;
  setsockopt(server->listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  // Accept only once the request has arrived (best effort): a probe is then answered in the
  // accept pass, and a peer that sends nothing holds no slot for the first second.
  setsockopt(server->listener_.get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof(one));
  if (bind(server->listener_.get(), address.get(), address.length) != 0 ||
      listen(server->listener_.get(), 64) != 0) {
    return absl::UnavailableError(absl::StrCat("--metrics-listen ", where,
                                               ": cannot listen: ", std::strerror(errno),
                                               "; choose a free address and port"));
  }
  absl::StatusOr<SocketAddress> bound = LocalAddress(server->listener_.get());
  if (!bound.ok()) return bound.status();
  server->address_ = *bound;
  server->stop_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  server->base_ = {event_base_new(), FreeBase};
  if (!server->stop_fd_.valid() || server->base_ == nullptr) {
    return absl::ResourceExhaustedError("cannot create the metrics listener's event loop");
  }
  server->accept_event_ = {event_new(server->base_.get(), server->listener_.get(),
                                     EV_READ | EV_PERSIST, &MetricsServer::OnAccept, server.get()),
                           FreeEvent};
  server->stop_event_ = {event_new(server->base_.get(), server->stop_fd_.get(), EV_READ,
                                   &MetricsServer::OnStop, server.get()),
                         FreeEvent};
  if (server->accept_event_ == nullptr || server->stop_event_ == nullptr ||
      event_add(server->accept_event_.get(), nullptr) != 0 ||
      event_add(server->stop_event_.get(), nullptr) != 0) {
    return absl::ResourceExhaustedError("cannot create the metrics listener's events");
  }
  return server;
}

MetricsServer::~MetricsServer() {
  Stop();
  exchanges_.clear();  // their events before the base
  accept_event_.reset();
  stop_event_.reset();
  base_.reset();
}

void MetricsServer::Start() {
  // Signals are the main thread's (sigwait, server/server_main.cc): this thread must never
  // take one, whichever the main thread blocks later.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  thread_ = std::thread([this] { event_base_dispatch(base_.get()); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void MetricsServer::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  ssize_t ignored = write(stop_fd_.get(), &one, sizeof(one));  // eventfd: never short
  (void)ignored;
  thread_.join();
}

void MetricsServer::OnStop(int fd, short what, void* arg) {
  event_base_loopbreak(static_cast<MetricsServer*>(arg)->base_.get());
}

void MetricsServer::OnAccept(int fd, short what, void* arg) {
  MetricsServer* server = static_cast<MetricsServer*>(arg);
  for (int i = 0; i < server->options_.max_connections; ++i) {
    ScopedFd client(accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client.valid()) return;  // EAGAIN, or an error a later wakeup retries
    auto exchange = std::make_unique<Exchange>();
    exchange->server = server;
    exchange->fd = std::move(client);
    exchange->ev.reset(event_new(server->base_.get(), exchange->fd.get(), EV_READ | EV_PERSIST,
                                 &MetricsServer::OnExchange, exchange.get()));
    exchange->deadline.reset(
        evtimer_new(server->base_.get(), &MetricsServer::OnDeadline, exchange.get()));
    if (exchange->ev == nullptr || exchange->deadline == nullptr) continue;
    const timeval timeout = absl::ToTimeval(server->options_.exchange_timeout);
    if (event_add(exchange->ev.get(), nullptr) != 0 ||
        event_add(exchange->deadline.get(), &timeout) != 0) {
      continue;
    }
    Exchange* fresh = exchange.get();
    server->exchanges_.push_back(std::move(exchange));
    // The request is usually there already (TCP_DEFER_ACCEPT): answered in this pass, a probe
    // never waits in the table, so no churn of slow peers can evict it before it is read.
    OnExchange(fresh->fd.get(), EV_READ, fresh);
    server->MakeRoom(fresh);
  }
}

void MetricsServer::MakeRoom(const Exchange* fresh) {
  if (static_cast<int>(exchanges_.size()) <= options_.max_connections) return;
  // Oldest first: the first one still reading has sent no whole request in all that time. Not
  // the one just accepted (`fresh`, the last), whose room this makes.
  const auto last = exchanges_.end() - 1;
  auto victim = std::find_if(exchanges_.begin(), last, [](const auto& e) { return !e->writing; });
  if (victim == last) victim = exchanges_.begin();
  if (victim->get() == fresh) return;  // a table of one
  // A peer can make this repeat as fast as it connects.
  static LogRateLimit limit("metrics connection evicted");
  LogWarningLimited(limit,
                    "--metrics-listen: all %d connections taken (slow or idle peers?); closed "
                    "the oldest %s to serve a new one",
                    options_.max_connections,
                    (*victim)->writing ? "one" : "one still reading its request");
  exchanges_.erase(victim);
}

void MetricsServer::OnDeadline(int fd, short what, void* arg) {
  Exchange* exchange = static_cast<Exchange*>(arg);
  exchange->server->Finish(exchange);
}

void MetricsServer::OnExchange(int fd, short what, void* arg) {
  Exchange* exchange = static_cast<Exchange*>(arg);
  MetricsServer* server = exchange->server;
  if (!exchange->writing) {
    char buffer[2048];
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
      server->Finish(exchange);
      return;
    }
    exchange->in.append(buffer, static_cast<size_t>(n));
    bool valid = true;
    std::string method;
    std::string path;
    HttpReply reply;
    if (!ParseHttpRequestHead(exchange->in, valid, method, path)) {
      if (exchange->in.size() <= kMaxOpsRequestBytes) return;  // wait for the rest
      reply = {.status = 431, .body = "request head too large\n"};
    } else if (!valid) {
      reply = {.status = 400, .body = "not an HTTP/1.x request\n"};
    } else if (method != "GET" && method != "HEAD") {
      reply = {.status = 405, .body = "only GET and HEAD\n"};
    } else {
      reply = server->route_(method, path);
    }
    exchange->out = Render(reply, method == "HEAD");
    exchange->writing = true;
    event_del(exchange->ev.get());
    event_assign(exchange->ev.get(), server->base_.get(), fd, EV_WRITE | EV_PERSIST,
                 &MetricsServer::OnExchange, exchange);
    event_add(exchange->ev.get(), nullptr);  // still under the deadline set at accept
  }
  while (exchange->sent < exchange->out.size()) {
    ssize_t n = send(fd, exchange->out.data() + exchange->sent,
                     exchange->out.size() - exchange->sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;  // wait until writable
    if (n <= 0) break;
    exchange->sent += static_cast<size_t>(n);
  }
  // Whole reply sent (or the peer is gone). Closing with unread request bytes could reset the
  // reply; a scraper sends one GET and reads to EOF, so half-close first.
  shutdown(fd, SHUT_WR);
  server->Finish(exchange);
}

void MetricsServer::Finish(Exchange* exchange) {
  auto it = std::find_if(exchanges_.begin(), exchanges_.end(),
                         [exchange](const auto& e) { return e.get() == exchange; });
  if (it != exchanges_.end()) exchanges_.erase(it);
}

}  // namespace onepass
