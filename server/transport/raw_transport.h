// Plain TCP as a Transport (server/transport/transport.h): the socket's bytes are the request
// and the answer goes out as it is. This is the single pass's transport, and it adds nothing to
// it: the recv writes straight into the request buffer, the answer leaves in one send (its tail
// corked to leave with the FIN when the connection closes next), a body by sendfile(2).
#ifndef ONEPASS_SERVER_TRANSPORT_RAW_TRANSPORT_H_
#define ONEPASS_SERVER_TRANSPORT_RAW_TRANSPORT_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "server/transport/transport.h"

namespace onepass {

class RawTransport final : public Transport {
 public:
  // A new connection: its first bytes are checked for a TLS ClientHello (a client on the
  // wrong port, closed at once instead of left to time out on a "request" that never ends).
  void Start() { seen_bytes_ = false; }

  absl::Span<uint8_t> ReceiveTail(InputBuffer& input) override { return input.WritableTail(); }
  Intake TakeReceived(size_t n, InputBuffer& input, SendPath& send) override;
  Owed owed() const override { return Owed::kNothing; }
  Flushed Flush(OutputBuffer& out, bool closing, SendPath& send) override;
  void AfterProxyHeader(InputBuffer& input, const std::array<uint8_t, 16>& client) override {
    if (!input.empty()) seen_bytes_ = true;  // the request came with the header
  }

 private:
  bool seen_bytes_ = false;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_TRANSPORT_RAW_TRANSPORT_H_
