// onepass-reference: the minimal server the benchmarks measure onepassd against, in the same
// run on the same CPUs. Per thread: one SO_REUSEPORT listener with TCP_DEFER_ACCEPT and one
// epoll loop; accept, read the request, write a fixed valid answer (DNS: the query's ID and
// question with one A record; whois: a fixed text; ocsp: HTTP 200 with a fixed DER body from
// --response-file), close (--keepalive: DNS answers every query until the client closes). It does
// no other work: no limits, no timeouts, no data; the distance between it and onepassd is
// onepassd's own cost.
//
// Like onepassd it prints "listening on ADDR:PORT" then "ready", and at SIGTERM/SIGINT
// "stats accepted=N served=N".
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/arguments.h"
#include "common/cpu_list.h"
#include "common/flag_help.h"
#include "common/log.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "ADDR:PORT ([ADDR]:PORT for IPv6); port 0 picks one");
ABSL_FLAG(int, threads, 1, "worker threads, each with its own SO_REUSEPORT listener");
ABSL_FLAG(std::string, cpus, "", "pin worker i to the i-th CPU of this list");
ABSL_FLAG(int, cpu, -1, "pin the single worker to this CPU (same as --cpus N)");
ABSL_FLAG(std::string, proto, "dns", "dns | whois | ocsp | rdap: which fixed answer to write");
ABSL_FLAG(std::string, response_file, "",
          "ocsp: the DER OCSPResponse every request gets (e.g. a pre-signed good.der); rdap: "
          "the whole HTTP response (head and body, as onepassd sent it: curl -si)");
ABSL_FLAG(int, dns_answer_bytes, 0,
          "dns: make the fixed answer this many bytes (without the length prefix) with an OPT "
          "record (DO set) carrying RFC 7830 padding, to compare with onepassd's answers of "
          "that size (e.g. signed ones, to EDNS queries); 0 = the plain one-A-record answer");
ABSL_FLAG(bool, keepalive, false,
          "dns: answer every query on a connection until the client closes it (RFC 7766 "
          "§6.2.1), for clients that send several; default: close after the first answer");
ABSL_FLAG(int, backlog, 65535, "listen backlog (capped by net.core.somaxconn)");

namespace onepass::reference {
namespace {

constexpr size_t kMaxRequest = 4096;
std::atomic<bool> g_stop{false};
int g_wake_fd = -1;

void OnSignal(int) {
  g_stop.store(true);
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(g_wake_fd, &one, sizeof(one));
}

bool g_whois = false;
bool g_ocsp = false;  // or rdap: an HTTP request in, g_ocsp_reply out
size_t g_dns_answer_bytes = 0;
bool g_keepalive = false;
std::string g_ocsp_reply;  // the whole HTTP response, built once

// Content-Length of an HTTP request head (0 if absent), by a case-insensitive search.
size_t ContentLength(const std::string& head) {
  std::string lower = head;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  return static_cast<size_t>(std::strtoul(lower.c_str() + at + 17, nullptr, 10));
}

// Returns the answer for a complete request, "" while incomplete, "\x01" for a request to drop.
std::string Answer(const std::string& request) {
  if (g_ocsp) {
    size_t end = request.find("\r\n\r\n");
    if (end == std::string::npos) return "";
    if (request.size() < end + 4 + ContentLength(request.substr(0, end))) return "";
    return g_ocsp_reply;
  }
  if (g_whois) {
    if (request.find('\n') == std::string::npos) return "";
    return "domain: reference.example\r\nstatus: fixed answer of onepass-reference\r\n";
  }
  if (request.size() < 2) return "";
  size_t length = (static_cast<uint8_t>(request[0]) << 8) | static_cast<uint8_t>(request[1]);
  if (request.size() < 2 + length) return "";
  // Header (12) + QNAME + QTYPE + QCLASS, RFC 1035 §4.1.
  size_t at = 2 + 12;
  while (at < 2 + length && request[at] != 0) {
    if ((static_cast<uint8_t>(request[at]) & 0xC0) != 0) return "\x01";
    at += 1 + static_cast<uint8_t>(request[at]);
  }
  at += 1 + 4;
  if (length < 12 || at > 2 + length) return "\x01";
  std::string message = request.substr(2, at - 2);
  message[2] = static_cast<char>(0x84 | (message[2] & 0x79));  // QR, AA; keep opcode and RD
  message[3] = 0;                                              // NOERROR
  message[6] = 0, message[7] = 1;                              // ANCOUNT 1
  message[8] = message[9] = message[10] = message[11] = 0;     // no NS, no additional (OPT)
  message += std::string("\xC0\x0C\x00\x01\x00\x01\x00\x00\x0E\x10\x00\x04\xC0\x00\x02\x01", 16);
  // Filler: an OPT (RFC 6891 §6.1.2) with the DO bit and a Padding option (RFC 7830) of the
  // length that makes the answer g_dns_answer_bytes long.
  if (g_dns_answer_bytes >= message.size() + 15) {
    const size_t padding = g_dns_answer_bytes - message.size() - 15;
    message[11] = 1;  // ARCOUNT
    message += std::string("\x00\x00\x29\x04\xD0\x00\x00\x80\x00", 9);
    message.push_back(static_cast<char>((padding + 4) >> 8));
    message.push_back(static_cast<char>((padding + 4) & 0xFF));
    message += std::string("\x00\x0C", 2);
    message.push_back(static_cast<char>(padding >> 8));
    message.push_back(static_cast<char>(padding & 0xFF));
    message.append(padding, '\0');
  }
  std::string framed;
  framed.push_back(static_cast<char>(message.size() >> 8));
  framed.push_back(static_cast<char>(message.size() & 0xFF));
  return framed + message;  // one send: prefix and message together (RFC 7766 §8)
}

struct WorkerStats {
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> served{0};
};

void ServeRequest(int fd, std::string* buffer, WorkerStats* stats, bool* done) {
  char chunk[kMaxRequest];
  *done = true;
  while (true) {
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer->append(chunk, static_cast<size_t>(n));
      // --keepalive: every whole request in the buffer (pipelined ones too), in order.
      for (std::string answer = Answer(*buffer); !answer.empty(); answer = Answer(*buffer)) {
        if (answer == "\x01") return;
        if (send(fd, answer.data(), answer.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(answer.size())) {
          return;
        }
        stats->served.fetch_add(1, std::memory_order_relaxed);
        if (!g_keepalive) return;
        const size_t length =
            (static_cast<uint8_t>((*buffer)[0]) << 8) | static_cast<uint8_t>((*buffer)[1]);
        buffer->erase(0, 2 + length);
      }
      if (buffer->size() > kMaxRequest) return;
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      *done = false;
      return;
    }
    if (n < 0 && errno == EINTR) continue;
    return;
  }
}

void RunWorker(int listen_fd, int cpu, WorkerStats* stats) {
  // Best effort, as before: an unpinned reference server still answers.
  if (cpu >= 0) PinCurrentThread(cpu).IgnoreError();
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  epoll_event event = {};
  event.events = EPOLLIN;
  event.data.fd = listen_fd;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &event);
  event.data.fd = g_wake_fd;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, g_wake_fd, &event);
  std::unordered_map<int, std::string> parked;  // connections whose request is incomplete
  epoll_event events[256];
  while (!g_stop.load(std::memory_order_relaxed)) {
    int n = epoll_wait(epoll_fd, events, 256, -1);
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == g_wake_fd) continue;
      if (fd == listen_fd) {
        for (int accepted = 0; accepted < 64; ++accepted) {
          int client = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (client < 0) break;
          stats->accepted.fetch_add(1, std::memory_order_relaxed);
          std::string buffer;
          bool done = false;
          ServeRequest(client, &buffer, stats, &done);
          if (done) {
            close(client);
          } else {
            epoll_event wait_event = {};
            wait_event.events = EPOLLIN;
            wait_event.data.fd = client;
            epoll_ctl(epoll_fd, EPOLL_CTL_ADD, client, &wait_event);
            parked[client] = std::move(buffer);
          }
        }
        continue;
      }
      bool done = false;
      ServeRequest(fd, &parked[fd], stats, &done);
      if (done) {
        parked.erase(fd);
        close(fd);
      }
    }
  }
  for (auto& [fd, buffer] : parked) close(fd);
  close(epoll_fd);
}

int Main(int argc, char** argv) {
  SetLogProgramName("onepass-reference");
  absl::SetProgramUsageMessage(
      "minimal reference server for onepass benchmarks: accept, read, fixed answer, close.");
  std::vector<std::string> args = NormalizeArguments(argc, argv);
  if (WantsHelp(args)) {
    // Its own flags with their defaults (Abseil's --help lists none: they are not in a file
    // named after the program).
    std::vector<const absl::CommandLineFlag*> flags;
    for (const char* name : {"listen", "threads", "cpus", "cpu", "proto", "response_file",
                             "dns_answer_bytes", "keepalive", "backlog"}) {
      if (const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name)) {
        flags.push_back(flag);
      }
    }
    std::fputs(
        FormatFlagHelp(absl::StrCat("onepass-reference: ", absl::ProgramUsageMessage()), flags)
            .c_str(),
        stdout);
    return 0;
  }
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  absl::ParseCommandLine(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  std::string proto = absl::GetFlag(FLAGS_proto);
  if (proto != "dns" && proto != "whois" && proto != "ocsp" && proto != "rdap") {
    LogError("--proto must be dns, whois, ocsp or rdap");
    return 1;
  }
  g_whois = proto == "whois";
  g_keepalive = absl::GetFlag(FLAGS_keepalive);
  if (g_keepalive && proto != "dns") {
    LogError("--keepalive is for --proto dns");
    return 1;
  }
  g_ocsp = proto == "ocsp" || proto == "rdap";
  if (absl::GetFlag(FLAGS_dns_answer_bytes) < 0 || absl::GetFlag(FLAGS_dns_answer_bytes) > 65535) {
    LogError("--dns-answer-bytes must be 0..65535");
    return 1;
  }
  g_dns_answer_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_dns_answer_bytes));
  if (proto == "rdap") {
    std::ifstream file(absl::GetFlag(FLAGS_response_file), std::ios::binary);
    std::stringstream response;
    response << file.rdbuf();
    if (!file || response.str().find("\r\n\r\n") == std::string::npos) {
      LogError("--proto rdap needs --response-file FILE holding a whole HTTP response");
      return 1;
    }
    g_ocsp_reply = response.str();
  } else if (g_ocsp) {
    std::ifstream file(absl::GetFlag(FLAGS_response_file), std::ios::binary);
    std::stringstream body;
    body << file.rdbuf();
    if (!file || body.str().empty()) {
      LogError("--proto ocsp needs --response-file FILE holding a DER OCSPResponse");
      return 1;
    }
    g_ocsp_reply = absl::StrCat("HTTP/1.1 200 OK\r\nContent-Type: application/ocsp-response\r\n",
                                "Content-Length: ", body.str().size(),
                                "\r\nConnection: close\r\n\r\n", body.str());
  }
  int threads = absl::GetFlag(FLAGS_threads);
  std::vector<int> cpus;
  if (!absl::GetFlag(FLAGS_cpus).empty()) {
    absl::StatusOr<std::vector<int>> parsed = ParseCpuList(absl::GetFlag(FLAGS_cpus));
    if (!parsed.ok()) {
      LogError("--cpus: %s", parsed.status().message());
      return 1;
    }
    cpus = *parsed;
  } else if (absl::GetFlag(FLAGS_cpu) >= 0) {
    cpus = {absl::GetFlag(FLAGS_cpu)};
  }
  if (threads < 1 || threads > 1024) {
    LogError("--threads must be 1..1024");
    return 1;
  }
  std::string listen_text = absl::GetFlag(FLAGS_listen);
  sockaddr_storage address = {};
  socklen_t address_length = 0;
  {
    std::string host = listen_text;
    std::string port_text;
    size_t colon = listen_text.rfind(':');
    if (colon == std::string::npos) {
      LogError("--listen must be ADDR:PORT");
      return 1;
    }
    host = listen_text.substr(0, colon);
    port_text = listen_text.substr(colon + 1);
    int port = 0;
    if (!absl::SimpleAtoi(port_text, &port) || port < 0 || port > 65535) {
      LogError("--listen: bad port %s", port_text);
      return 1;
    }
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(port);
      if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6->sin6_addr) != 1) {
        LogError("--listen: bad IPv6 address %s", host);
        return 1;
      }
      address_length = sizeof(sockaddr_in6);
    } else {
      auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
      v4->sin_family = AF_INET;
      v4->sin_port = htons(port);
      if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) != 1) {
        LogError("--listen: bad IPv4 address %s", host);
        return 1;
      }
      address_length = sizeof(sockaddr_in);
    }
  }
  std::vector<int> listeners;
  for (int i = 0; i < threads; ++i) {
    int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    int defer_s = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    // Client speaks first: accept only once the request is there
    // (docs/design.md "The connection path").
    setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof(defer_s));
    // --keepalive: each answer leaves at once (accepted sockets inherit it), not held by
    // Nagle's algorithm behind an earlier unacknowledged answer.
    if (g_keepalive) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), address_length) != 0 ||
        listen(fd, absl::GetFlag(FLAGS_backlog)) != 0) {
      LogError("cannot listen on %s: %s", listen_text, std::strerror(errno));
      return 1;
    }
    if (i == 0) {  // the later listeners join the port the first one got
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &address_length);
    }
    listeners.push_back(fd);
  }
  char host[INET6_ADDRSTRLEN] = "";
  int port = 0;
  if (address.ss_family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
    port = ntohs(v4->sin_port);
    std::printf("listening on %s:%d\nready\n", host, port);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
    port = ntohs(v6->sin6_port);
    std::printf("listening on [%s]:%d\nready\n", host, port);
  }
  std::fflush(stdout);

  g_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::vector<WorkerStats> stats(threads);
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    int cpu = cpus.empty() ? -1 : cpus[i % cpus.size()];
    workers.emplace_back(RunWorker, listeners[i], cpu, &stats[i]);
  }
  for (std::thread& worker : workers) worker.join();
  uint64_t accepted = 0;
  uint64_t served = 0;
  for (WorkerStats& worker : stats) {
    accepted += worker.accepted.load();
    served += worker.served.load();
  }
  std::printf("stats accepted=%llu served=%llu\n", static_cast<unsigned long long>(accepted),
              static_cast<unsigned long long>(served));
  for (int fd : listeners) close(fd);
  return 0;
}

}  // namespace
}  // namespace onepass::reference

int main(int argc, char** argv) { return onepass::reference::Main(argc, argv); }
