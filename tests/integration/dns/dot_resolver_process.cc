#include "tests/integration/dns/dot_resolver_process.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/support/loopback_port.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"

namespace onepass::dns::testing {
namespace {

using onepass::testing::RunCommand;

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string StubbyConf(const std::string& dir, int port, const DotUpstream& upstream) {
  std::string conf = absl::StrCat(
      "resolution_type: GETDNS_RESOLUTION_STUB\n",
      // The strict profile (RFC 8310 §5): TLS only, no answer unless the upstream is
      // authenticated.
      "dns_transport_list:\n  - GETDNS_TRANSPORT_TLS\n",
      "tls_authentication: GETDNS_AUTHENTICATION_REQUIRED\n",
      // stubby.yml.example's values: queries padded (RFC 8467 §4.1), the connection kept
      // this long unless the server's edns-tcp-keepalive says less (RFC 7858 §3.4).
      "tls_query_padding_blocksize: 128\n", "edns_client_subnet_private: 1\n",
      "round_robin_upstreams: 0\n", "idle_timeout: ", upstream.client_idle_ms, "\n",
      "appdata_dir: \"", dir, "\"\n", "listen_addresses:\n  - 127.0.0.1@", port, "\n");
  if (!upstream.ca_file.empty())
    absl::StrAppend(&conf, "tls_ca_file: \"", upstream.ca_file, "\"\n");
  absl::StrAppend(&conf, "upstream_recursive_servers:\n  - address_data: 127.0.0.1\n",
                  "    tls_port: ", upstream.port, "\n");
  if (!upstream.auth_name.empty()) {
    absl::StrAppend(&conf, "    tls_auth_name: \"", upstream.auth_name, "\"\n");
  }
  if (!upstream.spki_pin.empty()) {
    absl::StrAppend(&conf, "    tls_pubkey_pinset:\n      - digest: \"sha256\"\n",
                    "        value: ", upstream.spki_pin, "\n");
  }
  return conf;
}

std::string KresdConf(const std::string& dir, int port, const std::string& zone,
                      const DotUpstream& upstream) {
  return absl::StrCat(
      "-- Written by tests/integration/dns/dot_resolver_process.cc for one test.\n",
      "-- onepassd's zones are unsigned, and a proof of that (the parent's DS) needs the root.\n",
      "trust_anchors.remove('.')\n",
      "-- No query to the root servers: no priming, time-skew check or RFC 5011 update.\n",
      "modules.unload('priming')\nmodules.unload('detect_time_skew')\n",
      "modules.unload('ta_update')\n", "cache.open(10 * MB, 'lmdb://", dir, "/cache')\n",
      "policy.add(policy.suffix(policy.TLS_FORWARD({{'127.0.0.1@", upstream.port, "', hostname='",
      upstream.auth_name, "', ca_file='", upstream.ca_file, "'}}), {todname('", zone, "')}))\n",
      "policy.add(policy.all(policy.REFUSE))\n",
      // Last: the port listens once the rest is in force.
      "net.listen('127.0.0.1', ", port, ", { kind = 'dns' })\n");
}

}  // namespace

absl::StatusOr<std::string> SpkiPin(const std::string& path) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(path.c_str(), "r"), &BIO_free);
  if (bio == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
  if (cert == nullptr) return absl::InvalidArgumentError(absl::StrCat("no certificate in ", path));
  unsigned char* der = nullptr;
  const int der_length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert.get()), &der);
  if (der_length <= 0) return absl::InternalError("i2d_X509_PUBKEY");
  unsigned char digest[SHA256_DIGEST_LENGTH];
  unsigned int digest_length = 0;
  const bool hashed = EVP_Digest(der, static_cast<size_t>(der_length), digest, &digest_length,
                                 EVP_sha256(), nullptr) == 1;
  OPENSSL_free(der);
  if (!hashed) return absl::InternalError("EVP_Digest");
  unsigned char text[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
  const int text_length = EVP_EncodeBlock(text, digest, static_cast<int>(digest_length));
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(text_length));
}

std::string UnboundTlsForwardConf(const std::string& zone, const DotUpstream& upstream) {
  std::string forward_addr = absl::StrCat("127.0.0.1@", upstream.port);
  if (!upstream.auth_name.empty()) absl::StrAppend(&forward_addr, "#", upstream.auth_name);
  return absl::StrCat(
      // Unbound asks no upstream on loopback unless told to.
      "  do-not-query-localhost: no\n", "  tls-cert-bundle: \"", upstream.ca_file, "\"\n",
      // Resolved (forwarded) rather than refused by UnboundProcess's local-zone "." refuse.
      "  local-zone: \"", zone, "\" transparent\n", "forward-zone:\n", "  name: \"", zone, "\"\n",
      "  forward-tls-upstream: yes\n", "  forward-addr: ", forward_addr, "\n");
}

absl::StatusOr<std::unique_ptr<DotResolverProcess>> DotResolverProcess::StartStubby(
    const DotUpstream& upstream) {
  return Start(
      "stubby", [&](const std::string& dir, int port) -> absl::StatusOr<std::vector<std::string>> {
        const std::string conf = dir + "/stubby.yml";
        if (absl::Status s = WriteText(conf, StubbyConf(dir, port, upstream)); !s.ok()) {
          return s;
        }
        // -i: parse the configuration and exit, for a clear error.
        auto check = RunCommand({"stubby", "-C", conf, "-i"}, absl::Seconds(10));
        if (!check.ok()) return check.status();
        if (check->exit_code != 0) {
          return absl::FailedPreconditionError(absl::StrCat("stubby -i: ", check->err, check->out));
        }
        return std::vector<std::string>{"stubby", "-C", conf, "-l"};
      });
}

absl::StatusOr<std::unique_ptr<DotResolverProcess>> DotResolverProcess::StartKresd(
    const std::string& zone, const DotUpstream& upstream) {
  return Start(
      "kresd", [&](const std::string& dir, int port) -> absl::StatusOr<std::vector<std::string>> {
        const std::string conf = dir + "/kresd.conf";
        if (absl::Status s = WriteText(conf, KresdConf(dir, port, zone, upstream)); !s.ok()) {
          return s;
        }
        // -n: no interactive prompt on stdin; the run directory (its control
        // socket) is the temporary one. As root it stays root: no user() call.
        return std::vector<std::string>{"kresd", "-n", "-c", conf, dir};
      });
}

absl::StatusOr<std::unique_ptr<DotResolverProcess>> DotResolverProcess::Start(
    const std::string& name,
    const std::function<absl::StatusOr<std::vector<std::string>>(const std::string& dir, int port)>&
        write_config) {
  std::unique_ptr<DotResolverProcess> process(new DotResolverProcess());
  std::string dir_template = absl::StrCat("/tmp/onepass-", name, "-XXXXXX");
  if (mkdtemp(dir_template.data()) == nullptr) return absl::InternalError("mkdtemp");
  process->dir_ = dir_template;
  process->log_path_ = absl::StrCat(process->dir_, "/", name, ".log");
  process->port_ = onepass::testing::FreeLoopbackPort();
  if (process->port_ <= 0) return absl::InternalError("no free port on 127.0.0.1");
  absl::StatusOr<std::vector<std::string>> argv = write_config(process->dir_, process->port_);
  if (!argv.ok()) return argv.status();
  std::vector<char*> args;
  for (std::string& arg : *argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const unsigned lifetime_s = static_cast<unsigned>(absl::ToInt64Seconds(kLifetime));
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork");
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);  // the test ended before prctl
    alarm(lifetime_s);
    const int fd = open(process->log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execvp(args[0], args.data());
    _exit(127);
  }
  process->pid_ = pid;
  bool exited = false;
  const bool listening = onepass::testing::WaitFor(
      [&] {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
          exited = true;
          return true;
        }
        return onepass::testing::IsListening(process->port_);
      },
      absl::Seconds(15));
  if (exited) {
    process->pid_ = -1;
    return absl::FailedPreconditionError(absl::StrCat(name, " exited: ", process->Log()));
  }
  if (!listening) {
    return absl::DeadlineExceededError(absl::StrCat(name, " did not listen on ", process->port_,
                                                    " within 15 s: ", process->Log()));
  }
  return process;
}

DotResolverProcess::~DotResolverProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string DotResolverProcess::Log() const {
  std::ifstream in(log_path_);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace onepass::dns::testing
