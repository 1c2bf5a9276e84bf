// The answer a correct DNS server gives to one of the load tester's queries, for the unit tests
// of the per-connection machines (exchange_test.cc, tls_exchange_test.cc).
#ifndef ONEPASS_TESTS_UNIT_LOADTEST_DNS_ANSWER_H_
#define ONEPASS_TESTS_UNIT_LOADTEST_DNS_ANSWER_H_

#include <string>

#include "absl/strings/string_view.h"

namespace onepass::load {

// The answer to `request` (length prefix, header, question): QR and AA set, NOERROR, one A
// record. `id_delta` changes the ID.
inline std::string AnswerTo(absl::string_view request, int id_delta = 0) {
  std::string message(request.substr(2));
  message[1] = static_cast<char>(message[1] + id_delta);
  message[2] = static_cast<char>(0x84 | (message[2] & 0x79));
  message[3] = 0;
  message[6] = 0, message[7] = 1;
  message += std::string("\xC0\x0C\x00\x01\x00\x01\x00\x00\x0E\x10\x00\x04\xC0\x00\x02\x01", 16);
  std::string framed;
  framed.push_back(static_cast<char>(message.size() >> 8));
  framed.push_back(static_cast<char>(message.size() & 0xFF));
  return framed + message;
}

}  // namespace onepass::load

#endif  // ONEPASS_TESTS_UNIT_LOADTEST_DNS_ANSWER_H_
