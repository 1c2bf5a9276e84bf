#include "handlers/dns/frontend_counters.h"

#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onepass::dns {

absl::Span<const CounterSpec> FrontendCounterSpecs(const std::vector<std::string>& backends) {
  struct Lists {
    std::mutex mutex;
    // Keyed by the slots joined; the names the specs point into, once each, never move.
    std::map<std::string, std::vector<CounterSpec>> specs;
    std::set<std::string> names;
  };
  static Lists* lists = new Lists;  // never freed: the server may hold any list to the end
  std::lock_guard<std::mutex> lock(lists->mutex);
  const std::string key = absl::StrCat(backends.size(), ":", absl::StrJoin(backends, " "));
  auto found = lists->specs.find(key);
  if (found != lists->specs.end()) return found->second;
  std::vector<CounterSpec> specs(std::begin(kFrontendCounters), std::end(kFrontendCounters));
  for (const std::string& backend : backends) {
    const std::string& name = *lists->names.insert(backend).first;  // "": a vacant slot
    for (CounterSpec spec : kBackendCounters) {
      spec.scope_label = "backend";
      spec.scope_value = name;
      specs.push_back(spec);
    }
  }
  return lists->specs.emplace(key, std::move(specs)).first->second;
}

}  // namespace onepass::dns
