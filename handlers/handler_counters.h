// The counters a protocol exports (handlers/handler.h: HandlerFactory::Counters), and the
// per-worker block its handlers write them to.
//
// A protocol declares a fixed list of CounterSpecs, each a Prometheus sample
// `family{label="value"}` (e.g. dns_responses{rcode="NXDOMAIN"}), optionally scoped to one
// configured thing (`family{backend="192.0.2.1:53",outcome="forwarded"}`); its handlers count into
// a HandlerCounters block by index in that list. The block belongs to the server's worker, not to
// the handler: a SIGHUP reload creates new handlers that count on into the same block, so the
// counts survive it. Summing over workers and printing is the server's job.
#ifndef ONEPASS_HANDLERS_HANDLER_COUNTERS_H_
#define ONEPASS_HANDLERS_HANDLER_COUNTERS_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace onepass {

// One counter: the sample family{label="value"}, or just `family` when `label` is empty.
// Names follow Prometheus rules ([a-z_]); values hold no space, '"' or '='.
struct CounterSpec {
  absl::string_view family;
  absl::string_view label;
  absl::string_view value;
  absl::string_view help;
  // A label put first, naming one of several configured things the sample is about (the DNS
  // frontend's backend="ADDR:PORT"), or empty. Its value may hold any character but '"'; an
  // empty value with a scope_label set marks a vacant slot (no such thing configured now):
  // counted into by nobody, and left out of every export (Exported).
  absl::string_view scope_label = {};
  absl::string_view scope_value = {};
  // A level, not a count (e.g. backends held down now): exported as the gauge
  // `onepass_<family>` (no _total), summed over workers; written with HandlerCounters::Set.
  bool gauge = false;
};

// One number describing the loaded data (HandlerFactory::DataGauges), exported by the
// metrics listener as the gauge `onepass_<name>{labels}`, e.g. dns_zone_serial{zone="a."}.
// Described once per load; a reload replaces the whole list.
struct DataGauge {
  std::string name;  // [a-z_], in base units (`_seconds`, `_bytes`)
  std::string help;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

// A protocol's counters as one list, so that an index cannot drift from its sample (the shape
// of server/core/stats.h). LIST(COUNTER, GAUGE) names them in index order:
// COUNTER(kName, family, label, value, help), or GAUGE(...) for a level (CounterSpec::gauge).
// ONEPASS_HANDLER_COUNTERS(Enum, kTable, LIST) then defines, in the namespace it is used in,
// `enum class Enum : size_t` (kName..., then kCount), the array `constexpr CounterSpec
// kTable[]` in that order, and Count(counters, Enum::kName).
#define ONEPASS_COUNTER_ENUMERATOR(name, family, label, value, help) name,
#define ONEPASS_COUNTER_SPEC(name, family, label, value, help) \
  ::onepass::CounterSpec{family, label, value, help},
#define ONEPASS_GAUGE_SPEC(name, family, label, value, help) \
  ::onepass::CounterSpec{family, label, value, help, {}, {}, /*gauge=*/true},
#define ONEPASS_HANDLER_COUNTERS(Enum, table, LIST)                       \
  enum class Enum : size_t {                                              \
    LIST(ONEPASS_COUNTER_ENUMERATOR, ONEPASS_COUNTER_ENUMERATOR) kCount   \
  };                                                                      \
  inline constexpr ::onepass::CounterSpec table[] = {                     \
      LIST(ONEPASS_COUNTER_SPEC, ONEPASS_GAUGE_SPEC)};                    \
  inline void Count(::onepass::HandlerCounters& counters, Enum counter) { \
    counters.Add(static_cast<size_t>(counter));                           \
  }

// Whether the sample is exported: false for a vacant slot (scope_label set, scope_value empty).
inline bool Exported(const CounterSpec& spec) {
  return spec.scope_label.empty() || !spec.scope_value.empty();
}

// The sample name: `family{scope_label="scope_value",label="value"}`, without the labels that
// are empty.
std::string CounterName(const CounterSpec& spec);

// "name=N name=N ..." in the order of `specs` (values[i] belongs to specs[i]).
std::string FormatCounters(absl::Span<const CounterSpec> specs, absl::Span<const uint64_t> values);

// A fixed number of counters of one worker. Written by that worker's thread only (through its
// handler), read from any thread: relaxed atomics updated with load+store, a plain mov on x86
// as in server/core/stats.h. Allocated in whole cache lines, so two workers' blocks share none.
class HandlerCounters {
 public:
  explicit HandlerCounters(size_t count)
      : lines_(std::make_unique<Line[]>((count + kPerLine - 1) / kPerLine)), size_(count) {}
  HandlerCounters(const HandlerCounters&) = delete;
  HandlerCounters& operator=(const HandlerCounters&) = delete;

  size_t size() const { return size_; }

  // The owning worker's thread only. `index` < size().
  void Add(size_t index, uint64_t n = 1) {
    assert(index < size_);
    std::atomic<uint64_t>& counter = At(index);
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  // The owning worker's thread only: a gauge's level. `index` < size().
  void Set(size_t index, uint64_t value) {
    assert(index < size_);
    At(index).store(value, std::memory_order_relaxed);
  }

  // Any thread.
  uint64_t Read(size_t index) const {
    assert(index < size_);
    return lines_[index / kPerLine].values[index % kPerLine].load(std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kPerLine = 8;
  struct alignas(64) Line {
    std::atomic<uint64_t> values[kPerLine] = {};
  };
  std::atomic<uint64_t>& At(size_t index) {
    return lines_[index / kPerLine].values[index % kPerLine];
  }

  std::unique_ptr<Line[]> lines_;
  size_t size_;
};

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_HANDLER_COUNTERS_H_
