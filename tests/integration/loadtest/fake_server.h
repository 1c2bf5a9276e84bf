// A tiny TCP server inside the test process that answers on purpose right or wrong, so the
// load tester's counts can be checked exactly. One thread, blocking sockets, loopback only.
#ifndef ONEPASS_TESTS_INTEGRATION_LOADTEST_FAKE_SERVER_H_
#define ONEPASS_TESTS_INTEGRATION_LOADTEST_FAKE_SERVER_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace onepass::load::testing {

// What the server does with connection number `index` (0-based, in accept order).
struct FakeAction {
  enum Kind { kReply, kCloseSilently, kReset, kHang } kind = kReply;
  std::string reply;  // for kReply: written in one send, then the server closes
};

class FakeServer {
 public:
  // `complete(request)`: whether the request bytes so far are a whole request.
  // `respond(index, request)`: what to do with that connection.
  FakeServer(std::function<bool(const std::string&)> complete,
             std::function<FakeAction(int, const std::string&)> respond);
  ~FakeServer();  // stops the thread, closes every socket

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_.load(); }

 private:
  void Loop();

  std::function<bool(const std::string&)> complete_;
  std::function<FakeAction(int, const std::string&)> respond_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::vector<int> hung_;  // only touched by the server thread, then the destructor after join
  std::thread thread_;
};

// Request predicates for the three protocols.
bool DnsRequestComplete(const std::string& request);
bool LineComplete(const std::string& request);

// A correct DNS answer (one A record) to a framed query, and the same with the ID changed.
std::string DnsAnswer(const std::string& request, bool wrong_id = false);

}  // namespace onepass::load::testing

#endif  // ONEPASS_TESTS_INTEGRATION_LOADTEST_FAKE_SERVER_H_
