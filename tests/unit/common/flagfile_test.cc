// common/flagfile.h: --flagfile expansion.
#include "common/flagfile.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onepass {
namespace {

class FlagfileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    char name[] = "/tmp/onepass-flagfile-XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
    paths_.push_back(name);
    return name;
  }
  ~FlagfileTest() override {
    for (const std::string& path : paths_) unlink(path.c_str());
  }
  std::vector<std::string> paths_;
};

TEST_F(FlagfileTest, ExpandsInPlaceWithCommentsAndBothSpellings) {
  const std::string path =
      Write("# a comment\n\n  --listen=127.0.0.1:53\n--listen [::1]:53\n--read-timeout-ms=900  \n");
  absl::StatusOr<std::vector<std::string>> args =
      ExpandFlagfiles({"onepassd", "--handler", "dns", "--flagfile", path, "--workers=2"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(*args, (std::vector<std::string>{"onepassd", "--handler", "dns",
                                             "--listen=127.0.0.1:53", "--listen", "[::1]:53",
                                             "--read-timeout-ms=900", "--workers=2"}));
  args = ExpandFlagfiles({"onepassd", "--flagfile=" + path});
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(args->size(), 5u);
}

TEST_F(FlagfileTest, ErrorsSayWhat) {
  absl::StatusOr<std::vector<std::string>> missing =
      ExpandFlagfiles({"onepassd", "--flagfile", "/nonexistent/onepass.flags"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read it"), std::string::npos);
  const std::string bad = Write("--listen=1.2.3.4:5\nlisten 1\n");
  absl::StatusOr<std::vector<std::string>> not_flag =
      ExpandFlagfiles({"onepassd", "--flagfile", bad});
  ASSERT_FALSE(not_flag.ok());
  EXPECT_NE(not_flag.status().message().find("line 2"), std::string::npos);
  const std::string self = Write("");
  // A file that names itself: bounded.
  FILE* file = fopen(self.c_str(), "w");
  fprintf(file, "--flagfile=%s\n", self.c_str());
  fclose(file);
  EXPECT_FALSE(ExpandFlagfiles({"onepassd", "--flagfile", self}).ok());
  // After "--" nothing is expanded.
  absl::StatusOr<std::vector<std::string>> rest =
      ExpandFlagfiles({"onepassd", "--", "--flagfile", "x"});
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->size(), 4u);
}

}  // namespace
}  // namespace onepass
