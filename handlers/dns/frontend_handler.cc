#include "handlers/dns/frontend_handler.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "handlers/dns/dns_framer.h"
#include "handlers/dns/dns_handler.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/frontend_counters.h"
#include "handlers/dns/frontend_local_answer.h"
#include "handlers/dns/open_resolver_probe.h"

namespace onepass::dns {
namespace {

constexpr size_t kMaxFrameBytes = kLengthPrefixBytes + kMaxMessageBytes;
constexpr uint8_t kQr = 0x80;  // header byte 2
constexpr uint8_t kTc = 0x02;  // header byte 2

size_t Index(FrontendCounter counter) { return static_cast<size_t>(counter); }

// The first question of `message` (RFC 1035 §4.1.2): its length in bytes (QNAME, QTYPE,
// QCLASS) and that of its QNAME; 0/0 when QDCOUNT is 0; nullopt when it is malformed (a
// compression pointer has no business in a query's only name).
struct QuestionSpan {
  size_t bytes = 0;
  size_t qname_bytes = 0;
};
std::optional<QuestionSpan> FirstQuestion(absl::Span<const uint8_t> message) {
  if (message.size() < kHeaderBytes) return std::nullopt;
  if (ReadU16(message.data() + 4) == 0) return QuestionSpan{};
  size_t at = kHeaderBytes;
  while (true) {
    if (at >= message.size()) return std::nullopt;
    const uint8_t length = message[at];
    if (length == 0) break;
    if (length > 63) return std::nullopt;
    at += 1 + length;
  }
  ++at;  // the root label
  if (at - kHeaderBytes > 255 || at + 4 > message.size()) return std::nullopt;
  return QuestionSpan{at + 4 - kHeaderBytes, at - kHeaderBytes};
}

// The reply's first question is the one sent: QNAME compared case-insensitively (RFC 4343),
// QTYPE and QCLASS exactly. An error reply may come without a question (NSD answers REFUSED
// with QDCOUNT 0 to class HS; dnsdist accepts the same): matched on the ID alone, which is
// safe because it cannot carry an answer.
bool QuestionMatches(const InFlight& entry, absl::Span<const uint8_t> reply) {
  if (entry.question.empty()) return true;  // QDCOUNT 0: the ID is all there is
  if (ReadU16(reply.data() + 4) == 0) {
    return (reply[3] & kRcodeMask) != kRcodeNoError && ReadU16(reply.data() + 6) == 0 &&
           ReadU16(reply.data() + 8) == 0;
  }
  if (reply.size() < kHeaderBytes + entry.question.size()) return false;
  const uint8_t* theirs = reply.data() + kHeaderBytes;
  const auto* ours = reinterpret_cast<const uint8_t*>(entry.question.data());
  for (size_t i = 0; i < entry.qname_bytes; ++i) {
    if (LowerAscii(theirs[i]) != LowerAscii(ours[i])) return false;
  }
  return std::memcmp(theirs + entry.qname_bytes, ours + entry.qname_bytes,
                     entry.question.size() - entry.qname_bytes) == 0;
}

uint16_t KeepaliveOpen(const RequestContext& context) {
  return context.keepalive > absl::ZeroDuration() && !context.peer_closed;
}

}  // namespace

namespace {

std::vector<bool> Present(const std::vector<SocketAddress>& slots) {
  std::vector<bool> present;
  for (const SocketAddress& slot : slots) present.push_back(slot.length != 0);
  return present;
}

// The limits the in-flight table was built with (its deadlines, its window).
bool SameLimits(const FrontendConfig& a, const FrontendConfig& b) {
  return a.backends.size() == b.backends.size() && a.timeout == b.timeout &&
         a.max_in_flight == b.max_in_flight && a.down_after == b.down_after &&
         a.probe_interval == b.probe_interval && a.udp_timeout == b.udp_timeout;
}

}  // namespace

FrontendHandler::FrontendHandler(const FrontendConfig& config, HandlerCounters& counters)
    : config_(config),
      counters_(counters),
      backends_(BackendsConfig{.backends = config.backends.size(),
                               .present = Present(config.backends),
                               .max_in_flight = config.max_in_flight,
                               .down_after = config.down_after,
                               .timeout = config.timeout,
                               .udp_timeout = config.udp_timeout,
                               .probe_interval = config.probe_interval}),
      cache_(config.cache) {
  scratch_.reserve(kMaxMessageBytes);
}

void FrontendHandler::TakeOver(ForwardingHandler& previous) {
  auto* old = dynamic_cast<FrontendHandler*>(&previous);
  if (old == nullptr) return;
  // The in-flight table holds the deadlines of the old limits: with other limits nothing
  // carries over, and TakeAbandoned answers every query. Else each slot that keeps its backend
  // (FrontendHandlerFactory::ArrangeAfter) carries its queries and health over; the queries of
  // a removed backend stay in `old`, answered by TakeAbandoned.
  const bool same_limits = SameLimits(old->config_, config_);
  std::vector<bool> keep(config_.backends.size(), false);
  for (size_t slot = 0; slot < config_.backends.size(); ++slot) {
    const SocketAddress& now = config_.backends[slot];
    const bool same =
        slot < old->config_.backends.size() && SameAddress(old->config_.backends[slot], now);
    keep[slot] = same_limits && same && now.length != 0;
    if (same) continue;
    // Another backend in the slot (or none): its series starts again from zero. The worker
    // owns the block and swaps handlers between events, so no count is lost or misfiled.
    for (size_t c = 0; c < static_cast<size_t>(BackendCounter::kCount); ++c) {
      if (BackendCounterIndex(slot, static_cast<BackendCounter>(c)) < counters_.size()) {
        counters_.Set(BackendCounterIndex(slot, static_cast<BackendCounter>(c)), 0);
      }
    }
  }
  if (same_limits) backends_.TakeOverFrom(old->backends_, keep);
  if (old->config_.cache == config_.cache) cache_ = std::move(old->cache_);
}

Verdict FrontendHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                                 OutputBuffer& out) {
  size_t consumed = 0;
  size_t forwarded = 0;
  bool answered = false;
  bool stopped = false;  // output or upstream queue full: the rest waits for the next call
  while (consumed < input.size()) {
    if (out.size() >= kSoftOutputLimit || (!out.empty() && out.available() < kMaxFrameBytes)) {
      stopped = true;
      break;
    }
    const Frame frame = NextFrame(input.subspan(consumed));
    if (frame.status == FrameStatus::kIncomplete) break;
    const absl::Span<const uint8_t> message = frame.message;
    if (frame.status == FrameStatus::kInvalid || message.size() < kHeaderBytes) {
      // Cannot be answered in the protocol: send what is due, then close.
      if (forwarded > 0) return {Action::kWaitUpstream, consumed, Action::kWriteThenClose};
      return {answered ? Action::kWriteThenClose : Action::kClose, consumed};
    }
    if (message[2] & kQr) {  // a response sent as a query: dropped (RFC 1035 §4.1.1)
      consumed += frame.frame_bytes;
      continue;
    }
    const uint16_t client_id = ReadU16(message.data());
    const uint16_t flags = ReadU16(message.data() + 2);
    const std::optional<QuestionSpan> question = FirstQuestion(message);
    const absl::Span<const uint8_t> question_bytes =
        question.has_value() ? message.subspan(kHeaderBytes, question->bytes)
                             : absl::Span<const uint8_t>();
    // A hit is answered in this pass, like a precompiled zone answer.
    const bool cacheable = question.has_value() && cache_.enabled() &&
                           DnsCache::MakeKey(message, question->qname_bytes, key_);
    if (cacheable) {
      if (cache_.Answer(key_, message, question->qname_bytes, context.now, out)) {
        Count(Index(FrontendCounter::kCacheHits));
        consumed += frame.frame_bytes;
        answered = true;
        continue;
      }
      Count(Index(FrontendCounter::kCacheMisses));
      // RFC 8767 §4: within the failure recheck window the stale answer goes out unasked.
      if (cache_.RefreshFailedRecently(key_, context.now) &&
          cache_.AnswerStale(key_, message, question->qname_bytes, context.now, out)) {
        Count(Index(FrontendCounter::kStaleRefreshFailed));
        consumed += frame.frame_bytes;
        answered = true;
        continue;
      }
    }
    uint16_t local_rcode = 0;
    int backend = -1;
    if (!question.has_value()) {
      local_rcode = kRcodeFormErr;  // RFC 1035 §4.1.1: unparseable
    } else if (backends_.AllDown()) {
      // RFC 8767: an expired answer (TTL 30) rather than SERVFAIL, within the stale window.
      if (cacheable && cache_.AnswerStale(key_, message, question->qname_bytes, context.now, out)) {
        Count(Index(FrontendCounter::kCacheStale));
        consumed += frame.frame_bytes;
        answered = true;
        continue;
      }
      local_rcode = kRcodeServFail;  // at once, not after the deadline
      Count(Index(FrontendCounter::kAllDownServfail));
    } else if (backends_.WindowFull() || (backend = backends_.Pick()) < 0) {
      local_rcode = kRcodeRefused;
      Count(Index(FrontendCounter::kWindowFullRefused));
    }
    if (local_rcode != 0) {
      // RFC 8914 §4.23: why our SERVFAIL, for a client that speaks EDNS.
      const std::optional<uint16_t> ede =
          local_rcode == kRcodeServFail ? std::optional(kEdeNoReachableAuthority) : std::nullopt;
      if (!AppendLocalAnswer({.id = client_id,
                              .query_flags = flags,
                              .question = question_bytes,
                              .rcode = local_rcode,
                              .ede = ede,
                              .query = message,
                              .encrypted = context.encrypted},
                             out)) {
        stopped = true;
        break;
      }
      consumed += frame.frame_bytes;
      answered = true;
      continue;
    }
    if (context.upstream == nullptr || !context.upstream->HasRoom(message.size())) {
      stopped = true;
      break;
    }
    const std::optional<uint16_t> id = backends_.Allocate(backend, context.now, false);
    InFlight& entry = backends_.Entry(backend, *id);  // Pick skips backends without free IDs
    entry.connection = context.connection;
    entry.client_id = client_id;
    entry.client_flags = flags;
    entry.encrypted = context.encrypted;
    entry.question.assign(reinterpret_cast<const char*>(question_bytes.data()),
                          question_bytes.size());
    entry.qname_bytes = question->qname_bytes;
    if (cacheable) {
      entry.cache_key = key_;
    } else {
      entry.cache_key.clear();
    }
    entry.query.assign(reinterpret_cast<const char*>(message.data()), message.size());
    WriteU16(reinterpret_cast<uint8_t*>(entry.query.data()), *id);
    if (cacheable && config_.stale_client_timeout > absl::ZeroDuration() &&
        cache_.HasStale(key_, context.now)) {
      // RFC 8767 §5: the stale answer if the backend has not answered by then.
      backends_.ArmClientTimer(backend, *id, context.now + config_.stale_client_timeout);
    }
    context.upstream->Push(
        backend, {reinterpret_cast<const uint8_t*>(entry.query.data()), entry.query.size()});
    Count(Index(FrontendCounter::kForwarded));
    CountBackend(backend, BackendCounter::kForwarded);
    consumed += frame.frame_bytes;
    ++forwarded;
  }
  // A started next message is read to its end, and so are pipelined queries still on their
  // way (RFC 7766 §6.2.1.1); with --keepalive-ms the connection stays open (RFC 7766 §6.2.3).
  const bool more_coming = consumed < input.size() || context.more_input_expected || stopped;
  const Action then = (more_coming && !context.peer_closed) || KeepaliveOpen(context)
                          ? Action::kWriteThenRead
                          : Action::kWriteThenClose;
  if (forwarded > 0) return {Action::kWaitUpstream, consumed, then};
  if (!answered) return {context.peer_closed ? Action::kClose : Action::kReadMore, consumed};
  return {then, consumed};
}

UpstreamAnswer FrontendHandler::TakeUpstreamReply(int upstream, absl::Span<const uint8_t> datagram,
                                                  absl::Time now, OutputBuffer& out) {
  return TakeReply(upstream, datagram, /*over_tcp=*/false, now, out);
}

UpstreamAnswer FrontendHandler::TakeUpstreamStreamReply(int upstream,
                                                        absl::Span<const uint8_t> frame,
                                                        absl::Time now, OutputBuffer& out) {
  const Frame parsed = NextFrame(frame);  // framed by FrameLength: whole, prefix first
  if (parsed.status != FrameStatus::kFrame || parsed.frame_bytes != frame.size()) {
    Count(Index(FrontendCounter::kMalformedReply));
    return {};
  }
  return TakeReply(upstream, parsed.message, /*over_tcp=*/true, now, out);
}

UpstreamAnswer FrontendHandler::TakeReply(int upstream, absl::Span<const uint8_t> datagram,
                                          bool over_tcp, absl::Time now, OutputBuffer& out) {
  if (datagram.size() < kHeaderBytes || !(datagram[2] & kQr)) {
    Count(Index(FrontendCounter::kMalformedReply));
    return {};
  }
  const uint16_t id = ReadU16(datagram.data());
  const InFlight* entry = backends_.Find(upstream, id);
  if (entry == nullptr) {
    Count(Index(FrontendCounter::kLateOrUnknownId));
    return {};
  }
  if (!QuestionMatches(*entry, datagram)) {
    Count(Index(FrontendCounter::kWrongQuestion));
    return {};
  }
  const bool late_full_udp = entry->udp_timed_out && !over_tcp && !(datagram[2] & kTc);
  if (entry->tcp != over_tcp && !late_full_udp) {
    // A UDP duplicate of a query now retried over TCP after TC=1 (or a TCP answer to a UDP
    // query): the answer this entry waits for comes by the other path. A full UDP answer after
    // the UDP deadline is as good as the TCP one it overtakes.
    Count(Index(FrontendCounter::kLateOrUnknownId));
    return {};
  }
  const bool probe = entry->probe;
  const bool truncated = (datagram[2] & kTc) != 0;
  if (truncated && !over_tcp && !probe) {
    // RFC 7766 §5 (RFC 1035 §4.2.1): a truncated UDP answer is asked again over TCP, to the
    // same backend, with the same ID (the entry and its deadline stay); the client, already
    // on TCP, must never see TC=1. The framed query goes in `out` for the server to send.
    if (!AppendFramed(entry->query, out)) return {};
    backends_.Entry(upstream, id).tcp = true;
    backends_.NoteAlive(upstream);
    Count(Index(FrontendCounter::kTcpRetried));
    CountBackend(upstream, BackendCounter::kTruncated);
    return {.resend_over_stream = true};
  }
  // A TC=1 answer is never cached (RFC 2181 §9: it is not the whole answer).
  if (!probe && !truncated && !entry->cache_key.empty()) {
    cache_.Insert(entry->cache_key, datagram, now);
  }
  const UpstreamAnswer answer{.matched = !probe, .connection = entry->connection};
  const uint16_t client_id = entry->client_id;
  const bool servfail = (datagram[3] & kRcodeMask) == kRcodeServFail;
  if (!probe && servfail && !entry->cache_key.empty()) {
    cache_.NoteRefreshFailed(entry->cache_key, now);  // RFC 8767 §4: a failed refresh
  }
  if (entry->answered_stale) {  // the client has the stale answer: this one only refreshed
    if (Complete(upstream, id)) Count(Index(FrontendCounter::kMarkedUp));
    Count(Index(FrontendCounter::kRefreshedAfterStale));
    return {};
  }
  if (!probe && servfail && !entry->cache_key.empty() && AppendStale(*entry, now, out)) {
    // RFC 8767 §5: a stale answer rather than the backend's SERVFAIL.
    if (Complete(upstream, id)) Count(Index(FrontendCounter::kMarkedUp));
    Count(Index(FrontendCounter::kStaleRefreshFailed));
    return answer;
  }
  if (Complete(upstream, id)) Count(Index(FrontendCounter::kMarkedUp));
  if (probe) return {};
  absl::Span<uint8_t> tail = out.WritableTail();
  if (tail.size() < kLengthPrefixBytes + datagram.size()) return {};  // cannot happen: sized
  WriteU16(tail.data(), static_cast<uint16_t>(datagram.size()));
  std::memcpy(tail.data() + kLengthPrefixBytes, datagram.data(), datagram.size());
  WriteU16(tail.data() + kLengthPrefixBytes, client_id);  // the only byte changed: the ID
  out.CommitMessage(kLengthPrefixBytes + datagram.size());
  Count(Index(FrontendCounter::kAnswered));
  CountBackend(upstream, BackendCounter::kAnswered);
  if (over_tcp) Count(Index(FrontendCounter::kTcpAnswered));
  if (truncated) Count(Index(FrontendCounter::kTruncatedPassed));
  return answer;
}

bool FrontendHandler::TakeExpired(absl::Time now, OutputBuffer& out, UpstreamAnswer& answer,
                                  UpstreamQueue& probes) {
  for (int backend = backends_.DueProbe(now); backend >= 0; backend = backends_.DueProbe(now)) {
    SendProbe(backend, now, probes);
  }
  answer = UpstreamAnswer();
  while (std::optional<FrontendBackends::Due> due = backends_.PopClientTimer(now)) {
    InFlight& entry = backends_.Entry(due->backend, due->id);
    // Not in the cache any more (evicted, or past the stale window): the deadline stands.
    if (entry.answered_stale || !AppendStale(entry, now, out)) continue;
    entry.answered_stale = true;
    Count(Index(FrontendCounter::kStaleClientTimeout));
    answer = {.matched = true, .connection = entry.connection};
    return true;
  }
  std::optional<FrontendBackends::Expired> expired = backends_.PopExpired(now);
  if (!expired.has_value()) return false;
  if (expired->retry_over_tcp) {
    // No UDP answer in time: the query goes once more, over TCP (a backend that drops UDP for
    // rate answers TCP), keeping its ID and final deadline.
    if (!AppendFramed(expired->entry.query, out)) return true;
    Count(Index(FrontendCounter::kUdpTimeoutRetried));
    CountBackend(expired->backend, BackendCounter::kUdpTimeout);
    answer = {.resend_over_stream = true, .upstream = expired->backend};
    return true;
  }
  if (expired->marked_down) {
    Count(Index(FrontendCounter::kMarkedDown));
    counters_.Set(BackendCounterIndex(expired->backend, BackendCounter::kDown), 1);
  }
  if (expired->entry.probe) {  // nobody waits for a probe
    Count(Index(FrontendCounter::kProbeFailed));
    CountBackend(expired->backend, BackendCounter::kProbesFailed);
    return true;
  }
  const InFlight& entry = expired->entry;
  if (entry.tcp) Count(Index(FrontendCounter::kTcpFailed));
  if (!entry.cache_key.empty()) cache_.NoteRefreshFailed(entry.cache_key, now);  // RFC 8767 §4
  if (entry.answered_stale) return true;  // the client has had its (stale) answer
  if (!entry.cache_key.empty() && AppendStale(entry, now, out)) {
    // RFC 8767 §5: the stale answer rather than SERVFAIL when the backend failed.
    Count(Index(FrontendCounter::kStaleRefreshFailed));
    answer = {.matched = true, .connection = entry.connection};
    return true;
  }
  if (!AppendServfail(entry, out)) return true;
  Count(Index(FrontendCounter::kTimeoutServfail));
  CountBackend(expired->backend, BackendCounter::kTimeoutServfail);
  answer = {.matched = true, .connection = entry.connection};
  return true;
}

bool FrontendHandler::AppendServfail(const InFlight& entry, OutputBuffer& out) {
  const auto* question = reinterpret_cast<const uint8_t*>(entry.question.data());
  const auto* query = reinterpret_cast<const uint8_t*>(entry.query.data());
  // RFC 8914 §4.23 "No Reachable Authority": no backend answered in time. (Not §4.24 "Network
  // Error": a silent backend is no error we saw.)
  return AppendLocalAnswer({.id = entry.client_id,
                            .query_flags = entry.client_flags,
                            .question = {question, entry.question.size()},
                            .rcode = kRcodeServFail,
                            .ede = kEdeNoReachableAuthority,
                            .query = {query, entry.query.size()},
                            .encrypted = entry.encrypted},
                           out);
}

bool FrontendHandler::TakeAbandoned(absl::Time now, OutputBuffer& out, UpstreamAnswer& answer) {
  // Every query still here is one the new handler did not take over (its backends differ):
  // its backend is no longer asked, so its client gets SERVFAIL now, not at the backstop.
  answer = UpstreamAnswer();
  while (std::optional<FrontendBackends::Expired> expired =
             backends_.PopExpired(absl::InfiniteFuture())) {
    const InFlight& entry = expired->entry;
    if (expired->retry_over_tcp || entry.probe || entry.answered_stale) continue;
    if (!AppendServfail(entry, out)) continue;
    Count(Index(FrontendCounter::kReloadServfail));
    answer = {.matched = true, .connection = entry.connection};
    return true;
  }
  return false;
}

bool FrontendHandler::Complete(int backend, uint16_t id) {
  if (!backends_.Complete(backend, id)) return false;
  counters_.Set(BackendCounterIndex(backend, BackendCounter::kDown), 0);
  return true;
}

bool FrontendHandler::AppendFramed(const std::string& query, OutputBuffer& out) {
  absl::Span<uint8_t> tail = out.WritableTail();
  if (tail.size() < kLengthPrefixBytes + query.size()) return false;  // cannot happen: sized
  WriteU16(tail.data(), static_cast<uint16_t>(query.size()));
  std::memcpy(tail.data() + kLengthPrefixBytes, query.data(), query.size());
  out.Commit(kLengthPrefixBytes + query.size());
  return true;
}

bool FrontendHandler::AppendStale(const InFlight& entry, absl::Time now, OutputBuffer& out) {
  if (entry.cache_key.empty()) return false;
  // The query as the client sent it (AnswerStale takes the ID and the QNAME's case from it).
  scratch_.assign(entry.query.begin(), entry.query.end());
  WriteU16(scratch_.data(), entry.client_id);
  return cache_.AnswerStale(entry.cache_key, scratch_, entry.qname_bytes, now, out);
}

void FrontendHandler::SendProbe(int backend, absl::Time now, UpstreamQueue& probes) {
  const std::string& name = config_.probe_name_wire;
  if (!probes.HasRoom(kHeaderBytes + name.size() + 4)) return;
  const std::optional<uint16_t> id = backends_.Allocate(backend, now, /*probe=*/true);
  if (!id.has_value()) return;
  InFlight& entry = backends_.Entry(backend, *id);
  entry.connection = 0;
  entry.encrypted = false;
  entry.cache_key.clear();
  entry.question = name;
  entry.question.append({0, 6, 0, 1});  // SOA, IN
  entry.qname_bytes = name.size();
  scratch_.assign(kHeaderBytes, 0);
  WriteU16(scratch_.data(), *id);
  WriteU16(scratch_.data() + 4, 1);  // QDCOUNT; RD clear: the backend's own data
  scratch_.insert(scratch_.end(), entry.question.begin(), entry.question.end());
  probes.Push(backend, scratch_);
  Count(Index(FrontendCounter::kProbesSent));
  CountBackend(backend, BackendCounter::kProbesSent);
}

std::string FrontendHandlerFactory::Summary() const {
  std::string summary;
  if (!config_.backends_file.empty()) {
    absl::StrAppend(&summary, "backends file ", config_.backends_file, ": ", backend_count(),
                    " backends (of --dns-max-backends=", config_.backends.size(),
                    "), read again on SIGHUP\n");
  }
  for (const SocketAddress& backend : config_.backends) {
    if (backend.length == 0) continue;  // a vacant slot
    absl::StrAppend(&summary, "backend ", backend.ToString(), ": UDP, TCP for retries\n");
  }
  // Every query reaches the backends from this host's few addresses: a per-client response
  // rate limit there drops or truncates most of them under load. They are retried over TCP,
  // which costs a connection each; the backend should exempt the frontend.
  absl::StrAppend(
      &summary,
      "each backend must answer this host over UDP and TCP (ACLs) without response rate "
      "limiting: NSD rrl-ratelimit: 0 (NSD cannot exempt one address), Knot mod-rrl whitelist, "
      "BIND rate-limit { exempt-clients { ... }; }, Unbound ip-ratelimit: 0 and access-control; "
      "see docs/operations.md\n");
  return summary;
}

FrontendHandlerFactory::FrontendHandlerFactory(FrontendConfig config) : config_(std::move(config)) {
  NameCounters();
}

void FrontendHandlerFactory::NameCounters() {
  std::vector<std::string> names;
  for (const SocketAddress& backend : config_.backends) {
    names.push_back(backend.length == 0 ? std::string() : backend.ToString());
  }
  counter_specs_ = FrontendCounterSpecs(names);
}

size_t FrontendHandlerFactory::backend_count() const {
  size_t count = 0;
  for (const SocketAddress& backend : config_.backends) count += backend.length != 0;
  return count;
}

void FrontendHandlerFactory::ArrangeAfter(const HandlerFactory& previous) {
  const auto* old = dynamic_cast<const FrontendHandlerFactory*>(&previous);
  if (old == nullptr || old->config_.backends.size() != config_.backends.size()) return;
  const std::vector<SocketAddress>& before = old->config_.backends;
  std::vector<SocketAddress> listed;
  for (const SocketAddress& backend : config_.backends) {
    if (backend.length != 0) listed.push_back(backend);
  }
  std::vector<SocketAddress> slots(before.size());
  std::vector<bool> placed(listed.size(), false);
  // A backend that stays keeps its slot: its in-flight queries, health and counters with it.
  for (size_t i = 0; i < listed.size(); ++i) {
    for (size_t slot = 0; slot < before.size(); ++slot) {
      // (--dns-backend may name one backend twice: each copy keeps a slot of its own.)
      if (slots[slot].length == 0 && SameAddress(before[slot], listed[i])) {
        slots[slot] = listed[i];
        placed[i] = true;
        break;
      }
    }
  }
  // A new one takes a slot that was vacant before if there is one (a slot freed by this reload
  // may still be counted into by a worker that has not swapped yet), else a freed one.
  for (const bool freed_ok : {false, true}) {
    size_t slot = 0;
    for (size_t i = 0; i < listed.size(); ++i) {
      if (placed[i]) continue;
      while (slot < slots.size() &&
             (slots[slot].length != 0 || (!freed_ok && before[slot].length != 0))) {
        ++slot;
      }
      if (slot == slots.size()) break;
      slots[slot] = listed[i];
      placed[i] = true;
    }
  }
  config_.backends = std::move(slots);
  NameCounters();
}

absl::Span<const CounterSpec> FrontendHandlerFactory::Counters() const { return counter_specs_; }

std::unique_ptr<Handler> FrontendHandlerFactory::CreateHandler(HandlerCounters& counters) const {
  return std::make_unique<FrontendHandler>(config_, counters);
}

size_t FrontendHandlerFactory::MaxRequestBytes() const { return kMaxFrameBytes; }

size_t FrontendHandlerFactory::OutputBufferBytes() const {
  return kSoftOutputLimit + kMaxFrameBytes;
}

std::optional<ForwardingSpec> FrontendHandlerFactory::Forwarding() const {
  return ForwardingSpec{.upstreams = config_.backends,
                        .datagrams = UpstreamDatagrams(),
                        .tick_period = UpstreamTickPeriod(),
                        .streams = UpstreamStreams()};
}

std::vector<StartupProbe> FrontendHandlerFactory::StartupProbes() const {
  return OpenResolverProbes(config_.backends);
}

UpstreamStreamConfig FrontendHandlerFactory::UpstreamStreams() const {
  // TCP to the backends serves only the retries of TC=1 answers (RFC 7766 §5), so a couple
  // of connections per backend per worker, pipelined, carry them; the io timeout is the
  // query deadline: a backend silent that long has failed those queries anyway. The ID pairs
  // a query with its answer, so the pool can send a query a broken connection lost once more
  // (same bytes: same ID, and the entry keeps its deadline).
  return {.frame_length = &FrameLength,
          .max_frame_bytes = kMaxFrameBytes,
          .connections = config_.tcp_connections,
          .idle_timeout = config_.tcp_idle_timeout,
          .io_timeout = config_.timeout,
          .request_key = &FrameMessageId};
}

UpstreamDatagramConfig FrontendHandlerFactory::UpstreamDatagrams() const {
  // The ID ties a query to its port: a forged reply must hit both (RFC 5452 §9.2). A port
  // lingers past the query deadline by two ticks, so a reply that still counts is never
  // refused by a closed port (ICMP) but dropped by the deadline, and counted as late.
  return {.request_key = &DatagramMessageId,
          .requests_per_port = config_.port_queries,
          .max_ports = config_.max_ports,
          .linger = config_.timeout + 2 * UpstreamTickPeriod()};
}

absl::Duration FrontendHandlerFactory::UpstreamTickPeriod() const {
  // A tenth of the deadline, between 1 and 10 ms: SERVFAIL at most that late.
  return std::clamp(config_.timeout / 10, absl::Milliseconds(1), absl::Milliseconds(10));
}

}  // namespace onepass::dns
