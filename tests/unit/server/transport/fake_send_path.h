// A SendPath (server/transport/transport.h) that records what a transport sends, takes at most
// `room` bytes in all (then EAGAIN), and says whether a send may be corked with the close.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TRANSPORT_FAKE_SEND_PATH_H_
#define ONEPASS_TESTS_UNIT_SERVER_TRANSPORT_FAKE_SEND_PATH_H_

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "server/transport/transport.h"

namespace onepass::testing {

class FakeSendPath final : public SendPath {
 public:
  ssize_t SendBytes(absl::Span<const uint8_t> bytes, bool last, bool body_follows) override {
    if (error != 0) return -error;
    if (room == 0) return -EAGAIN;
    const size_t n = std::min(room, bytes.size());
    room -= n;
    sent.append(reinterpret_cast<const char*>(bytes.data()), n);
    sends.push_back({n, last, body_follows});
    return static_cast<ssize_t>(n);
  }
  ssize_t SendBody(const OutputBuffer& out, bool last) override {
    return SendBytes(out.body().bytes, last, false);
  }
  bool MayCorkWithClose(size_t bytes) const override { return cork; }

  struct Send {
    size_t bytes;
    bool last;
    bool body_follows;
  };
  std::string sent;
  std::vector<Send> sends;
  size_t room = SIZE_MAX;
  int error = 0;
  bool cork = true;
};

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TRANSPORT_FAKE_SEND_PATH_H_
