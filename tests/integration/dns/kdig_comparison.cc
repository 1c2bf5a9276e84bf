#include "tests/integration/dns/kdig_comparison.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/support/subprocess.h"

namespace onepass::dns::testing {
namespace {

std::string ClassName(uint16_t qclass) {
  switch (qclass) {
    case 3:
      return "CH";
    case 4:
      return "CLASS4";  // kdig knows no mnemonic for Hesiod
    case 255:
      return "ANY";
    default:
      return "IN";
  }
}

}  // namespace

std::optional<std::vector<std::string>> KdigQueryArgs(const CorpusQuery& q) {
  if (q.type == "AXFR" || q.type == "IXFR") return std::nullopt;
  std::vector<std::string> args = {"-q", q.name, "-t", q.type, "-c", ClassName(q.options.qclass)};
  if (q.options.edns) args.push_back(absl::StrCat("+edns=", q.options.edns_version));
  if (q.options.do_bit) args.push_back("+dnssec");
  if (!q.options.rd) args.push_back("+norec");
  if (q.options.cd) args.push_back("+cdflag");
  if (q.options.keepalive) args.push_back("+ednsopt=11");  // empty, RFC 7828 §3.1
  return args;
}

absl::StatusOr<std::string> KdigAnswer(int port, bool tcp, const std::vector<std::string>& query) {
  return KdigAnswer(
      port, tcp ? std::vector<std::string>{"+tcp"} : std::vector<std::string>{"+notcp", "+ignore"},
      query);
}

absl::StatusOr<std::string> KdigAnswer(int port, const std::vector<std::string>& transport,
                                       const std::vector<std::string>& query) {
  std::vector<std::string> argv = {
      "kdig",      "-p",      std::to_string(port), "@127.0.0.1",  "+noall",     "+header", "+opt",
      "+question", "+answer", "+authority",         "+additional", "+timeout=2", "+retry=0"};
  argv.insert(argv.end(), transport.begin(), transport.end());
  argv.insert(argv.end(), query.begin(), query.end());
  auto run = onepass::testing::RunCommand(argv, absl::Seconds(10));
  if (!run.ok()) return run.status();
  std::string text = run->out;
  const size_t id = text.find("; id: ");
  if (id == std::string::npos) {
    return absl::UnavailableError(absl::StrCat("kdig printed no header: ", run->out, run->err));
  }
  text.erase(id, text.find('\n', id) - id);
  return text;
}

KdigTtls SplitTtls(absl::string_view text) {
  KdigTtls split;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (std::string& line : lines) {
    if (line.empty() || line[0] == ';') continue;
    // OWNER <spaces/tabs> TTL <tab> CLASS ...
    const size_t owner_end = line.find_first_of(" \t");
    if (owner_end == std::string::npos) continue;
    const size_t ttl = line.find_first_not_of(" \t", owner_end);
    if (ttl == std::string::npos || !absl::ascii_isdigit(line[ttl])) continue;
    size_t ttl_end = ttl;
    while (ttl_end < line.size() && absl::ascii_isdigit(line[ttl_end])) ++ttl_end;
    uint32_t value = 0;
    if (!absl::SimpleAtoi(line.substr(ttl, ttl_end - ttl), &value)) continue;
    split.ttls.push_back(value);
    line.replace(ttl, ttl_end - ttl, "TTL");
  }
  split.text = absl::StrJoin(lines, "\n");
  return split;
}

int ExpectKdigAgrees(int frontend_port, int backend_port, const std::vector<CorpusQuery>& corpus,
                     bool cached) {
  const absl::Time start = absl::Now();
  int compared = 0;
  for (const CorpusQuery& q : corpus) {
    const std::optional<std::vector<std::string>> query = KdigQueryArgs(q);
    if (!query.has_value()) continue;
    auto direct = KdigAnswer(backend_port, /*tcp=*/false, *query);
    if (!direct.ok()) {
      ADD_FAILURE() << q.line << ": straight to the backend: " << direct.status();
      continue;
    }
    for (int ask = 0; ask < (cached ? 2 : 1); ++ask) {
      auto through = KdigAnswer(frontend_port, /*tcp=*/true, *query);
      ++compared;
      if (!through.ok()) {
        ADD_FAILURE() << q.line << ": through the frontend: " << through.status();
        continue;
      }
      if (*through == *direct) continue;
      // A cached answer's TTLs are aged by the whole seconds it spent in the cache.
      const KdigTtls ours = SplitTtls(*through);
      const KdigTtls theirs = SplitTtls(*direct);
      const bool aged = cached && ours.text == theirs.text &&
                        TtlsAged(ours.ttls, theirs.ttls, absl::Now() - start);
      EXPECT_TRUE(aged) << q.line << (ask == 1 ? " (second time: from the cache)" : "")
                        << "\nthrough the frontend over TCP:\n"
                        << *through << "\nstraight to the backend over UDP:\n"
                        << *direct;
    }
  }
  return compared;
}

}  // namespace onepass::dns::testing
