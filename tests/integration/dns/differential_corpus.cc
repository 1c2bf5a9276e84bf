#include "tests/integration/dns/differential_corpus.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"

namespace onepass::dns::testing {

std::vector<CorpusQuery> ReadCorpus(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path << " missing";
  std::vector<CorpusQuery> corpus;
  std::string line;
  uint16_t id = 1;
  while (std::getline(in, line)) {
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> words = absl::StrSplit(text, ' ', absl::SkipEmpty());
    EXPECT_GE(words.size(), 2u) << line;
    if (words.size() < 2) continue;
    CorpusQuery q{std::string(text), words[0], words[1], {}};
    q.options.id = id++;
    for (size_t i = 2; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w == "edns") {
        q.options.edns = true;
      } else if (w == "do") {
        q.options.edns = q.options.do_bit = true;
      } else if (w == "norec") {
        q.options.rd = false;
      } else if (w == "cd") {
        q.options.cd = true;
      } else if (w == "keepalive") {
        q.options.edns = q.options.keepalive = true;
      } else if (absl::StartsWith(w, "ednsver=")) {
        int v = 0;
        EXPECT_TRUE(absl::SimpleAtoi(w.substr(8), &v)) << line;
        q.options.edns = true;
        q.options.edns_version = static_cast<uint8_t>(v);
      } else if (absl::StartsWith(w, "class=")) {
        const std::string c = w.substr(6);
        q.options.qclass = c == "IN" ? 1 : c == "CH" ? 3 : c == "HS" ? 4 : c == "ANY" ? 255 : 0;
        EXPECT_NE(q.options.qclass, 0) << line;
      } else {
        ADD_FAILURE() << "unknown option '" << w << "' in: " << line;
      }
    }
    corpus.push_back(q);
  }
  return corpus;
}

std::vector<std::string> Differences(const DecodedResponse& a, const DecodedResponse& b) {
  std::vector<std::string> d;
  if (a.id != b.id) d.push_back("id");
  if (a.rcode != b.rcode) d.push_back("rcode");
  if (a.opcode != b.opcode) d.push_back("opcode");
  if (a.qr != b.qr) d.push_back("qr");
  if (a.aa != b.aa) d.push_back("aa");
  if (a.tc != b.tc) d.push_back("tc");
  if (a.rd != b.rd) d.push_back("rd");
  if (a.ra != b.ra) d.push_back("ra");
  if (a.ad != b.ad || a.cd != b.cd) d.push_back("ad/cd");
  if (a.question != b.question) d.push_back("question");
  if (a.answer != b.answer) d.push_back("answer");
  if (a.authority != b.authority) d.push_back("authority");
  if (a.additional != b.additional) d.push_back("additional");
  if (a.has_opt != b.has_opt || a.opt_udp_size != b.opt_udp_size || a.opt_do != b.opt_do ||
      a.opt_version != b.opt_version || a.opt_options != b.opt_options) {
    d.push_back("opt");
  }
  return d;
}

absl::StatusOr<DecodedResponse> Ask(int port, const CorpusQuery& q) {
  auto replies = ExchangeTcp(port, {MakeQuery(q.name, q.type, q.options)});
  if (!replies.ok()) return replies.status();
  if (replies->size() != 1) {
    return absl::DataLossError(absl::StrCat(replies->size(), " messages in reply"));
  }
  return DecodeResponse((*replies)[0]);
}

}  // namespace onepass::dns::testing
