#include "handlers/handler_counters.h"

#include "absl/strings/str_cat.h"

namespace onepass {

std::string CounterName(const CounterSpec& spec) {
  std::string labels;
  if (!spec.scope_label.empty()) {
    absl::StrAppend(&labels, spec.scope_label, "=\"", spec.scope_value, "\"");
  }
  if (!spec.label.empty()) {
    absl::StrAppend(&labels, labels.empty() ? "" : ",", spec.label, "=\"", spec.value, "\"");
  }
  if (labels.empty()) return std::string(spec.family);
  return absl::StrCat(spec.family, "{", labels, "}");
}

std::string FormatCounters(absl::Span<const CounterSpec> specs, absl::Span<const uint64_t> values) {
  std::string text;
  for (size_t i = 0; i < specs.size() && i < values.size(); ++i) {
    if (!Exported(specs[i])) continue;
    absl::StrAppend(&text, text.empty() ? "" : " ", CounterName(specs[i]), "=", values[i]);
  }
  return text;
}

}  // namespace onepass
