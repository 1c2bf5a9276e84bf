// Malformed zone files (tests/data/zone_corpus): onepassd's loader gives the same accept or
// reject verdict as nsd-checkzone on each, and every rejection names the file and the line.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/dns/zone_loader.h"
#include "tests/support/subprocess.h"

namespace onepass::dns {
namespace {

const std::string kCorpus = std::string(ONEPASS_SOURCE_DIR) + "/tests/data/zone_corpus";

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    if (entry.path().extension() == ".zone") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ZoneCorpusTest, SameVerdictAsNsdCheckzoneAndErrorsNameFileAndLine) {
  // nsd is installed by scripts/install-deps.sh: a missing one fails rather than skips.
  ASSERT_TRUE(onepass::testing::ProgramExists("nsd-checkzone"));
  const std::vector<std::string> files = CorpusFiles();
  ASSERT_GE(files.size(), 30u);
  int rejected = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto nsd = onepass::testing::RunCommand({"nsd-checkzone", "bad.test", path}, absl::Seconds(20));
    ASSERT_TRUE(nsd.ok()) << nsd.status();
    ASSERT_FALSE(nsd->timed_out);
    const bool nsd_accepts = nsd->exit_code == 0;
    absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> ours = LoadZoneFiles({path});
    EXPECT_EQ(ours.ok(), nsd_accepts)
        << "nsd-checkzone: " << nsd->err << nsd->out << "\nonepass: " << ours.status();
    if (!ours.ok()) {
      ++rejected;
      // "<path>:<line>: what".
      const absl::string_view message = ours.status().message();
      ASSERT_TRUE(absl::StartsWith(message, path + ":")) << ours.status();
      const absl::string_view rest = message.substr(path.size() + 1);
      const size_t digits = rest.find_first_not_of("0123456789");
      EXPECT_TRUE(digits > 0 && digits != absl::string_view::npos && rest[digits] == ':')
          << ours.status();
    }
  }
  EXPECT_GE(rejected, 30);
}

}  // namespace
}  // namespace onepass::dns
