// Lingering close with the real programs: a client whose request is answered (and the
// connection ended) before it has finished sending must still read the whole response.
// Without it, close() with unread bytes makes the kernel send RST, and the client's kernel
// drops the response it had not read yet (RFC 9112 §9.6).
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"

namespace onepass {
namespace {

using testing::ServerProcess;
using testing::StatValue;
using testing::TcpClient;

const std::string kLineServer = LINE_SERVER_PATH;

// Sends `head`, then `chunks` writes of `chunk_bytes` filler with pauses (the server answers
// after the first ones), half-closes (the server's linger ends at that EOF, not at --linger-ms),
// then reads until the server closes.
absl::StatusOr<std::string> SendInPiecesAndRead(int port, const std::string& head, int chunks,
                                                size_t chunk_bytes) {
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port);
  if (!client.ok()) return client.status();
  if (absl::Status sent = client->Send(head); !sent.ok()) return sent;
  for (int i = 0; i < chunks; ++i) {
    usleep(20 * 1000);
    absl::Status sent = client->Send(std::string(chunk_bytes, 'a'));
    if (!sent.ok())
      return absl::Status(sent.code(), absl::StrCat("chunk ", i, ": ", sent.message()));
  }
  client->ShutdownWrite();
  return client->ReadUntilClose();
}

// The OCSP engineer's case: a header block over --ocsp-max-header-bytes gets 431 before the
// client is done sending it.
TEST(LingerTest, OcspHeaderTooLargeIsReadWholeByTheClient) {
  // onepassd needs a data set to start; none of its responses is asked for.
  std::string dir = ::testing::TempDir() + "/linger_ocsp.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  absl::StatusOr<testing::CommandResult> made = testing::RunCommand(
      {ONEPASS_SOURCE_DIR "/scripts/make-ocsp-testdata.sh", dir + "/data"}, absl::Seconds(60));
  ASSERT_TRUE(made.ok() && made->exit_code == 0) << made.status();
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "ocsp", "--listen", "127.0.0.1:0", "--workers", "1",
                            "--ocsp-responses", dir + "/data/responses", "--linger-ms", "5000"});
  ASSERT_TRUE(server.ok()) << server.status();
  for (int round = 0; round < 5; ++round) {
    absl::StatusOr<std::string> reply =
        SendInPiecesAndRead((*server)->port(), "GET /ocsp HTTP/1.1\r\nHost: h\r\nX-Big: ", 6, 8192);
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_TRUE(absl::StartsWith(*reply, "HTTP/1.1 431 ")) << *reply;
    // Whole: the body has the length the header announces.
    const size_t end_of_head = reply->find("\r\n\r\n");
    ASSERT_NE(end_of_head, std::string::npos) << *reply;
    const size_t length_at = reply->find("Content-Length: ");
    ASSERT_NE(length_at, std::string::npos) << *reply;
    size_t length = 0;
    ASSERT_TRUE(absl::SimpleAtoi(
        reply->substr(length_at + 16, reply->find("\r\n", length_at) - length_at - 16), &length));
    EXPECT_EQ(reply->size() - end_of_head - 4, length) << *reply;
  }
  EXPECT_EQ((*server)->Stop(), 0);
  ASSERT_TRUE(testing::RunCommand({"rm", "-rf", dir}, absl::Seconds(30)).ok());
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "lingering_closes"), 5) << out;
  EXPECT_EQ(StatValue(out, "reset_errors"), 0) << out;
}

// The transport alone: the line protocol answers the first line and closes (no keepalive)
// while the client is still sending.
TEST(LingerTest, LineServerAnswerSurvivesTheClientStillSending) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"--handler", "line", "--listen", "127.0.0.1:0", "--workers", "1", "--linger-ms", "2000"},
      kLineServer);
  ASSERT_TRUE(server.ok()) << server.status();
  for (int round = 0; round < 5; ++round) {
    absl::StatusOr<std::string> reply =
        SendInPiecesAndRead((*server)->port(), "first\nsecond", 6, 8192);
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(*reply, "worker=0 first\n");
  }
  // A client that never closes: cut after --linger-ms (2 s here, 10 s of polling at most),
  // counted, not an error.
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("first\nsec").ok());
  absl::StatusOr<std::string> line = client->ReadLine();
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line, "worker=0 first\n");
  int cut = 0;
  for (int i = 0; i < 250 && cut < 1; ++i) {
    usleep(20 * 1000);
    kill((*server)->pid(), SIGUSR1);
    usleep(20 * 1000);
    const std::string log = (*server)->ReadStderr();
    cut = absl::StrContains(log, "linger_cut=1") ? 1 : 0;
  }
  EXPECT_EQ(cut, 1);
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "lingering_closes"), 6) << out;
  EXPECT_EQ(StatValue(out, "linger_cut"), 1) << out;
  EXPECT_EQ(StatValue(out, "errors"), 0) << out;
}

}  // namespace
}  // namespace onepass
