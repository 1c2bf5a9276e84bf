// The --dns-backends-file parser: what a valid file may hold (comments, blank lines, IPv6, CRLF)
// and that each bad line is refused with the file and line named.
#include "handlers/dns/backends_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace onepass::dns {
namespace {

std::vector<std::string> Names(const std::vector<SocketAddress>& backends) {
  std::vector<std::string> names;
  for (const SocketAddress& backend : backends) names.push_back(backend.ToString());
  return names;
}

std::string ErrorOf(absl::string_view text, size_t max_backends = 16) {
  absl::StatusOr<std::vector<SocketAddress>> parsed =
      ParseBackendsFile(text, "backends.conf", max_backends);
  EXPECT_FALSE(parsed.ok()) << text;
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(BackendsFile, CommentsBlankLinesSpacesIpv6AndCrlf) {
  const std::string text =
      "# the pool\n"
      "\n"
      "127.0.0.1:5300\n"
      "   192.0.2.7:53   # with a comment after it\n"
      "\t[::1]:5301\t\r\n"
      "[2001:db8::53]:53\r\n"
      "   \n"
      "#192.0.2.99:53 commented out\n"
      "198.51.100.1:53";  // no newline at the end
  absl::StatusOr<std::vector<SocketAddress>> parsed = ParseBackendsFile(text, "backends.conf", 16);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(Names(*parsed),
            (std::vector<std::string>{"127.0.0.1:5300", "192.0.2.7:53", "[::1]:5301",
                                      "[2001:db8::53]:53", "198.51.100.1:53"}));
}

TEST(BackendsFile, BadAddressNamesFileAndLine) {
  const std::string error = ErrorOf("127.0.0.1:53\n\n# x\nlocalhost:53\n");
  EXPECT_NE(error.find("backends.conf:4: "), std::string::npos) << error;
}

TEST(BackendsFile, EachBadLineIsReported) {
  const std::string error = ErrorOf(
      "127.0.0.1\n"        // no port
      "127.0.0.1:0\n"      // port 0
      "::1:53\n"           // IPv6 without brackets
      "127.0.0.1:53 x\n"   // two words
      "127.0.0.1:70000\n"  // port out of range
      "192.0.2.1:53\n");   // good
  for (int line = 1; line <= 5; ++line) {
    EXPECT_NE(error.find(absl::StrCat("backends.conf:", line, ": ")), std::string::npos)
        << line << "\n"
        << error;
  }
  EXPECT_EQ(error.find("backends.conf:6:"), std::string::npos) << error;
  EXPECT_NE(error.find("one backend ADDR:PORT per line"), std::string::npos) << error;
}

TEST(BackendsFile, ReportsAtMostTenBadLines) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "bad\n";
  const std::string error = ErrorOf(text);
  EXPECT_NE(error.find("backends.conf:10: "), std::string::npos) << error;
  EXPECT_EQ(error.find("backends.conf:11: "), std::string::npos) << error;
}

TEST(BackendsFile, DuplicateNamesTheFirstLine) {
  const std::string error = ErrorOf("127.0.0.1:53\n[::1]:53\n[0:0::1]:53\n");
  EXPECT_NE(error.find("backends.conf:3: backend [::1]:53 is already listed on line 2"),
            std::string::npos)
      << error;
  // The same address on another port is another backend.
  EXPECT_TRUE(ParseBackendsFile("127.0.0.1:53\n127.0.0.1:54\n", "f", 16).ok());
}

TEST(BackendsFile, EmptyOrCommentsOnlyIsAnError) {
  for (const char* text : {"", "\n\n", "# nothing here\n   \n#127.0.0.1:53\n"}) {
    const std::string error = ErrorOf(text);
    EXPECT_NE(error.find("backends.conf: names no backend"), std::string::npos) << error;
  }
}

TEST(BackendsFile, MoreThanMaxBackends) {
  EXPECT_TRUE(ParseBackendsFile("127.0.0.1:1\n127.0.0.1:2\n", "f", 2).ok());
  const std::string error = ErrorOf("127.0.0.1:1\n127.0.0.1:2\n127.0.0.1:3\n", 2);
  EXPECT_NE(error.find("backends.conf:3: more than --dns-max-backends=2"), std::string::npos)
      << error;
}

TEST(BackendsFile, NulByteIsABadLine) {
  const std::string error = ErrorOf(std::string("127.0.0.1:53\0\n", 14));
  EXPECT_NE(error.find("backends.conf:1: "), std::string::npos) << error;
}

// The file is read as every data file is: a regular file, within --max-data-file-mb.
TEST(BackendsFile, ReadRefusesWhatIsNoRegularFile) {
  char dir_template[] = "/tmp/backends_file_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string good = dir + "/backends.conf";
  std::ofstream(good) << "127.0.0.1:5300\n";
  absl::StatusOr<std::vector<SocketAddress>> read = ReadBackendsFile(good, 16);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(Names(*read), std::vector<std::string>{"127.0.0.1:5300"});
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& bad : {dir, fifo, dir + "/missing", std::string("/dev/zero")}) {
    read = ReadBackendsFile(bad, 16);
    ASSERT_FALSE(read.ok()) << bad;
    EXPECT_NE(read.status().message().find("--dns-backends-file"), std::string::npos)
        << read.status();
  }
  unlink(fifo.c_str());
  unlink(good.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace onepass::dns
