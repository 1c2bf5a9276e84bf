// The differential tests' shared parts: the query corpus format (differential_queries.txt),
// asking one server over TCP, and comparing two answers.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_DIFFERENTIAL_CORPUS_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_DIFFERENTIAL_CORPUS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns::testing {

struct CorpusQuery {
  std::string line;
  std::string name;
  std::string type;
  QueryOptions options;
};

// Reads a corpus file: NAME TYPE [option ...] per line, '#' comments. Unknown options fail
// the calling test.
std::vector<CorpusQuery> ReadCorpus(const std::string& path);

// What differs between two answers: RCODE (with extended bits), opcode, flags, the question,
// every section as a set of records with TTLs, and the OPT record. Empty when they agree.
std::vector<std::string> Differences(const DecodedResponse& a, const DecodedResponse& b);

// Sends one query over TCP to 127.0.0.1:`port` and decodes the one answer.
absl::StatusOr<DecodedResponse> Ask(int port, const CorpusQuery& q);

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_DIFFERENTIAL_CORPUS_H_
