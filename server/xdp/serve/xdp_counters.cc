#include "server/xdp/serve/xdp_counters.h"

#include "absl/strings/str_cat.h"

namespace onepass::xdp {

XdpStatsSnapshot& XdpStatsSnapshot::operator+=(const XdpStatsSnapshot& other) {
#define ONEPASS_XDP_ADD(name, help) name += other.name;
  ONEPASS_XDP_COUNTERS(ONEPASS_XDP_ADD)
#undef ONEPASS_XDP_ADD
  return *this;
}

std::string XdpStatsSnapshot::Format() const {
  std::string text;
#define ONEPASS_XDP_FORMAT(name, help) \
  absl::StrAppend(&text, text.empty() ? "" : " ", "xdp_" #name "=", name);
  ONEPASS_XDP_COUNTERS(ONEPASS_XDP_FORMAT)
#undef ONEPASS_XDP_FORMAT
  return text;
}

void XdpCounters::Store(const XdpStatsSnapshot& s) {
#define ONEPASS_XDP_STORE(name, help) name.store(s.name, std::memory_order_relaxed);
  ONEPASS_XDP_COUNTERS(ONEPASS_XDP_STORE)
#undef ONEPASS_XDP_STORE
}

XdpStatsSnapshot XdpCounters::Read() const {
  XdpStatsSnapshot s;
#define ONEPASS_XDP_LOAD(name, help) s.name = name.load(std::memory_order_relaxed);
  ONEPASS_XDP_COUNTERS(ONEPASS_XDP_LOAD)
#undef ONEPASS_XDP_LOAD
  return s;
}

}  // namespace onepass::xdp
