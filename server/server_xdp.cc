// The Server's part of --xdp (server/xdp/): attaching to each interface at start, and after a
// hand-over (server/restart/listener_handover.h) taking each one over from the previous process.
//
// Why a hand-over cannot attach at once: an rx queue takes one AF_XDP socket (the kernel
// answers a second bind EBUSY, copy mode too), and the previous process's sockets hold the
// queues while it drains. Removing its program would only send those frames to the kernel and
// leave this process without the path. So the new process serves the interface through the
// kernel's listeners (which it holds already) until the old one has exited and detached, and
// attaches then: new connections never stop being answered. The old process's drain sends new
// SYNs to the kernel (XdpProgram::BeginDrain: to our listeners) and finishes its AF_XDP
// connections before it exits (Worker::OnStopRequested); what is lost are those still open at
// its drain's deadline; docs/operations.md says so.
#include <net/if.h>

#include <algorithm>
#include <future>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "server/server.h"
#include "server/xdp/serve/kernel_connections.h"

namespace onepass {

// An interface where XDP cannot run (no driver support, not root, no such interface) is
// logged and served by the kernel's listeners alone: they serve the same ports already, so a
// flag file shared by hosts with and without XDP starts everywhere.
void Server::AttachXdp(const ServerConfig& config, bool handed_over) {
  for (const SocketAddress& address : addresses_) {
    const auto port = static_cast<uint16_t>(address.port());
    if (std::find(xdp_ports_.begin(), xdp_ports_.end(), port) == xdp_ports_.end()) {
      xdp_ports_.push_back(port);
    }
  }
  xdp_kernel_flows_grace_ = config.max_connection_time + config.read_timeout;
  const xdp::XdpModePreference mode = XdpPreferenceOf(config.xdp_mode);
  if (handed_over) {
    xdp_takeover_ = {.ifnames = config.xdp,
                     .mode = mode,
                     // The old process drains for its --drain-timeout-ms (ours, as a rule)
                     // after it has handed over, which takes up to 10 s.
                     .wait = config.drain_timeout + absl::Seconds(15)};
    for (const std::string& ifname : config.xdp) {
      xdp_report_.push_back(absl::StrCat(
          "xdp ", ifname,
          ": taken over once the previous process has let go of it (a hand-over; logged "
          "then); the kernel's listeners serve it until then"));
    }
    xdp_serving_.store(true, std::memory_order_relaxed);
    return;
  }
  for (const std::string& ifname : config.xdp) {
    // Said once, by the start-up report.
    // Before Start: the workers' descriptors are the process's still.
    xdp_report_.push_back(
        ServeXdpInterface(ifname, mode, [&](const xdp::XdpProgram& program, uint32_t queue) {
          absl::StatusOr<int> fd = workers_[queue]->ServeXdp(ifname, queue, xdp_ports_);
          return fd.ok() ? program.SetSocket(queue, *fd) : fd.status();
        }));
  }
}

std::string Server::ServeXdpInterface(const std::string& ifname, xdp::XdpModePreference mode,
                                      const XdpQueueOpener& open_queue) {
  // Attach first: it is the one to name a missing interface ("in this network namespace").
  absl::StatusOr<std::unique_ptr<xdp::XdpProgram>> program =
      xdp::XdpProgram::Attach({.ifname = ifname,
                               .ports = xdp_ports_,
                               .mode = mode,
                               .kernel_flows_grace = xdp_kernel_flows_grace_});
  absl::StatusOr<uint32_t> queues =
      program.ok() ? xdp::RxQueueCount(ifname) : absl::StatusOr<uint32_t>(program.status());
  if (!queues.ok()) {
    return absl::StrCat("warning: xdp ", ifname, ": off (", queues.status().message(),
                        "); the kernel's listeners serve it");
  }
  const uint32_t served = std::min<uint32_t>(*queues, static_cast<uint32_t>(workers_.size()));
  uint32_t opened = 0;
  for (uint32_t q = 0; q < served; ++q) {
    if (absl::Status set = open_queue(**program, q); !set.ok()) {
      LogWarning("--xdp %s queue %d: %s; its frames go to the kernel's listeners", ifname, q,
                 set.message());
      continue;
    }
    ++opened;
  }
  std::string line = absl::StrCat("xdp ", ifname, ": ", xdp::DescribeMode(**program),
                                  ", rx queues 0-", served - 1, " of ", *queues, " by workers 0-",
                                  served - 1, " (", opened, " AF_XDP sockets), TCP ports ");
  for (size_t i = 0; i < xdp_ports_.size(); ++i) {
    absl::StrAppend(&line, i ? "," : "", xdp_ports_[i]);
  }
  if (*queues > served) {
    absl::StrAppend(&line, "; queues ", served, "-", *queues - 1,
                    " have no worker: their frames go to the kernel's listeners");
  }
  {
    std::lock_guard<std::mutex> lock(xdp_programs_mutex_);
    xdp_interfaces_.push_back({ifname, *std::move(program)});
  }
  xdp_serving_.store(true, std::memory_order_relaxed);
  return line;
}

void Server::TakeOverXdp() {
  const absl::Time start = absl::Now();
  const absl::Time give_up = start + xdp_takeover_.wait;
  for (const std::string& ifname : xdp_takeover_.ifnames) {
    // Our program on the interface is the previous process's: it detaches it as it exits,
    // after closing its AF_XDP sockets. Polled: one netlink dump per 2 ms, for seconds at most.
    const int ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
    bool let_go = true;
    while (ifindex != 0) {
      absl::StatusOr<int> ours = xdp::CountXdpSteer(ifindex);
      if (!ours.ok() || *ours == 0) break;  // an error is Attach's to report
      if (absl::Now() >= give_up) {
        let_go = false;
        break;
      }
      if (stopping_.load(std::memory_order_relaxed)) return;
      absl::SleepFor(absl::Milliseconds(2));
    }
    if (!let_go) {
      LogWarning(
          "xdp %s: the previous process still holds it after %s; taking it over anyway (its "
          "AF_XDP sockets may still hold the queues: then the kernel's listeners serve them)",
          ifname, absl::FormatDuration(xdp_takeover_.wait));
    }
    const std::string line = ServeXdpInterface(
        ifname, xdp_takeover_.mode, [&](const xdp::XdpProgram& program, uint32_t queue) {
          // The previous process's socket on the queue is closed, but the kernel lets go of
          // the queue a moment after (EBUSY until then): retried every 2 ms, for 2 s at most.
          const absl::Time until = absl::Now() + absl::Seconds(2);
          absl::Status opened = OpenXdpQueueOnWorker(program, ifname, queue);
          while (absl::IsUnavailable(opened) && absl::Now() < until &&
                 !stopping_.load(std::memory_order_relaxed)) {
            absl::SleepFor(absl::Milliseconds(2));
            opened = OpenXdpQueueOnWorker(program, ifname, queue);
          }
          return opened;
        });
    const int64_t waited_ms = absl::ToInt64Milliseconds(absl::Now() - start);
    if (absl::string_view rest = line; absl::ConsumePrefix(&rest, "warning: ")) {
      LogWarning("%s (after a hand-over, %d ms in)", rest, waited_ms);
    } else {
      LogInfo("%s; taken over from the previous process %d ms after start", line, waited_ms);
    }
  }
}

absl::Status Server::OpenXdpQueueOnWorker(const xdp::XdpProgram& program, const std::string& ifname,
                                          uint32_t queue) {
  // Shared: a worker that stops first may never answer, and the promise outlives this call.
  // `program` outlives the worker's answer: the Server owns it, and destroys the workers (and
  // joins this thread) first.
  auto result = std::make_shared<std::promise<absl::Status>>();
  std::future<absl::Status> answer = result->get_future();
  workers_[queue]->OfferXdp({.ifname = ifname,
                             .queue = queue,
                             .ports = xdp_ports_,
                             .done = [result, &program, queue](absl::StatusOr<int> fd) {
                               result->set_value(fd.ok() ? program.SetSocketFromOwnTable(queue, *fd)
                                                         : fd.status());
                             }});
  while (answer.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    if (stopping_.load(std::memory_order_relaxed)) {
      return absl::CancelledError("the server is stopping");
    }
  }
  return answer.get();
}

void Server::WatchKernelFlows() {
  if (xdp_interfaces_.empty() || xdp_kernel_flows_grace_ <= absl::ZeroDuration()) return;
  // Each program's own clock ends its grace at the latest; this ends it early. Listed only
  // now, after every queue's socket was registered: no connection of this interface that the
  // kernel takes from here on needs the lookup (its queue has no socket of ours).
  const absl::Time start = absl::Now();
  const absl::Time grace_end = start + xdp_kernel_flows_grace_;
  absl::StatusOr<absl::flat_hash_set<uint64_t>> listed = xdp::ListKernelConnections(xdp_ports_);
  std::optional<xdp::KernelConnectionsWatch> watch;
  if (listed.ok()) watch.emplace(*std::move(listed));
  while (listed.ok() && !watch->done()) {
    // One dump per 250 ms, for two minutes at most (the default grace).
    for (int i = 0; i < 25; ++i) {
      if (stopping_.load(std::memory_order_relaxed)) return;
      absl::SleepFor(absl::Milliseconds(10));
    }
    if (absl::Now() >= grace_end) return;  // the programs ended it themselves
    listed = xdp::ListKernelConnections(xdp_ports_);
    if (listed.ok()) watch->Update(*listed);
  }
  if (!listed.ok()) {
    LogWarning(
        "xdp: cannot list the kernel's connections on the served ports (%s): the XDP program "
        "looks segments up among the kernel's sockets for its whole grace period (%s after the "
        "attach), about 3%% more CPU per connection until then",
        listed.status().message(), absl::FormatDuration(xdp_kernel_flows_grace_));
    return;
  }
  {
    // A drain begun meanwhile (RequestStop) needs the lookups until the detach.
    std::lock_guard<std::mutex> lock(xdp_programs_mutex_);
    if (stopping_.load(std::memory_order_relaxed)) return;
    for (const xdp::AttachedInterface& attached : xdp_interfaces_) {
      if (absl::Status ended = attached.program->EndKernelFlowsGrace(); !ended.ok()) {
        LogWarning("%s; its grace period ends by itself", ended.message());
      }
    }
  }
  LogInfo(
      "xdp: %s; the XDP program no longer looks segments up among the kernel's sockets (%d ms "
      "after the AF_XDP path came up)",
      watch->at_attach() == 0
          ? std::string("no kernel connection on the served ports when the AF_XDP path came up")
          : absl::StrCat("the kernel's connections on the served ports from before the AF_XDP "
                         "path came up (",
                         watch->at_attach(), ") have closed"),
      absl::ToInt64Milliseconds(absl::Now() - start));
}

void Server::BeginXdpDrain() {
  std::lock_guard<std::mutex> lock(xdp_programs_mutex_);
  for (const xdp::AttachedInterface& attached : xdp_interfaces_) {
    if (absl::Status begun = attached.program->BeginDrain(); !begun.ok()) {
      LogWarning("%s", begun.message());
      continue;
    }
    LogInfo(
        "xdp %s: draining: new connections go to the kernel's listeners, the AF_XDP ones "
        "finish",
        attached.ifname);
  }
}

xdp::XdpStatsSnapshot Server::XdpStats() const {
  xdp::XdpStatsSnapshot total;
  for (const auto& worker : workers_) total += worker->xdp_stats();
  return total;
}

}  // namespace onepass
