// onepass-load's client shapes beside one query per connection: N queries per connection, one
// after the other and pipelined, against onepass-reference --keepalive (which answers every
// query until the client closes). The tester's counts of connections and of queries must agree
// with the server's own: "accepted" (connections) and "served" (answers) in its exit stats line.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace onepass::load::testing {
namespace {

using onepass::testing::CommandResult;
using onepass::testing::RunCommand;
using onepass::testing::ServerProcess;
using onepass::testing::StatValue;

struct Shape {
  int queries_per_conn;
  int pipeline;
};

class LoadShapesTest : public ::testing::TestWithParam<Shape> {};

TEST_P(LoadShapesTest, QueriesAndConnectionsAgreeWithTheServer) {
  const Shape shape = GetParam();
  auto server =
      ServerProcess::Start({"--keepalive", "--listen", "127.0.0.1:0"}, ONEPASS_REFERENCE_PATH);
  ASSERT_TRUE(server.ok()) << server.status();
  constexpr int kConnections = 60;
  absl::StatusOr<CommandResult> load =
      RunCommand({ONEPASS_LOAD_PATH, "--target", (*server)->addresses()[0], "--qname",
                  "www.example.com.", "--count", absl::StrCat(kConnections), "--concurrency", "4",
                  "--threads", "2", "--queries-per-conn", absl::StrCat(shape.queries_per_conn),
                  "--pipeline", absl::StrCat(shape.pipeline), "--timeout-ms", "5000"},
                 absl::Seconds(60));
  ASSERT_TRUE(load.ok()) << load.status();
  if (load->exit_code == 1 && load->err.find("uring core") != std::string::npos) {
    GTEST_SKIP() << "this kernel cannot run the uring core: " << load->err;
  }
  EXPECT_EQ(load->exit_code, 0) << load->out << load->err;
  const int queries = kConnections * shape.queries_per_conn;
  EXPECT_NE(load->out.find(absl::StrCat(kConnections, " started, ", kConnections, " ok, 0 errors")),
            std::string::npos)
      << load->out;
  EXPECT_NE(load->out.find(absl::StrCat(queries, " sent, ", queries, " ok")), std::string::npos)
      << load->out;
  ASSERT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
  const std::string stats = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(stats, "accepted"), kConnections) << stats;
  EXPECT_EQ(StatValue(stats, "served"), queries) << stats;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LoadShapesTest,
                         ::testing::Values(Shape{5, 1}, Shape{6, 3}, Shape{8, 8}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return absl::StrCat("N", info.param.queries_per_conn, "W",
                                               info.param.pipeline);
                         });

TEST(LoadShapesCloseTest, AServerThatClosesAfterOneAnswerIsShortOfTheRest) {
  // Without --keepalive the reference closes after its first answer, as onepassd does by
  // default: every connection asked for three is short, each with one query answered.
  auto server = ServerProcess::Start({"--listen", "127.0.0.1:0"}, ONEPASS_REFERENCE_PATH);
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CommandResult> load =
      RunCommand({ONEPASS_LOAD_PATH, "--target", (*server)->addresses()[0], "--count", "20",
                  "--concurrency", "2", "--queries-per-conn", "3", "--timeout-ms", "5000"},
                 absl::Seconds(60));
  ASSERT_TRUE(load.ok()) << load.status();
  if (load->exit_code == 1 && load->err.find("uring core") != std::string::npos) {
    GTEST_SKIP() << "this kernel cannot run the uring core: " << load->err;
  }
  EXPECT_EQ(load->exit_code, 3) << load->out << load->err;
  EXPECT_NE(load->out.find("20 started, 0 ok, 20 errors"), std::string::npos) << load->out;
  EXPECT_NE(load->out.find("closed before all answers: 1 of 3 answered"), std::string::npos)
      << load->out;
  EXPECT_NE(load->out.find(" sent, 20 ok"), std::string::npos) << load->out;
  (*server)->Stop();
}

}  // namespace
}  // namespace onepass::load::testing
