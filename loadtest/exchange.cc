#include "loadtest/exchange.h"

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"

namespace onepass::load {

uint32_t RequestSource::NextRandom() {
  // xorshift64*: fast, and good enough for message IDs.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return static_cast<uint32_t>((state_ * 0x2545F4914F6CDD1DULL) >> 32);
}

void Exchange::Begin(int64_t origin_ns, int64_t now_ns) {
  phase_ = Phase::kConnecting;
  succeeded_ = false;
  origin_ns_ = origin_ns;
  queued_ = 0;
  answered_ = 0;
  for (Pending& pending : pending_) spare_.push_back(std::move(pending));
  pending_.clear();
  send_buffer_.clear();
  send_offset_ = 0;
  response_.clear();
  ++stats_->started;
  QueueQueries(now_ns);
}

void Exchange::QueueQueries(int64_t now_ns) {
  if (send_offset_ == send_buffer_.size()) {
    send_buffer_.clear();
    send_offset_ = 0;
  }
  const size_t window = static_cast<size_t>(std::max(config_->pipeline, 1));
  while (pending_.size() < window && queued_ < config_->queries_per_conn) {
    Pending pending;
    if (!spare_.empty()) {
      pending = std::move(spare_.back());
      spare_.pop_back();
    }
    requests_->Next(&pending.request);
    pending.sent_ns = now_ns;
    send_buffer_ += pending.request;
    pending_.push_back(std::move(pending));
    ++queued_;
    ++stats_->queries_sent;
  }
}

void Exchange::OnConnected(int error, int64_t now_ns) {
  if (phase_ != Phase::kConnecting) return;
  if (error != 0) {
    OnError(error, now_ns);
    return;
  }
  phase_ = Phase::kExchanging;
}

void Exchange::OnSent(size_t bytes, int64_t now_ns) {
  if (!active()) return;
  bytes = std::min(bytes, send_buffer_.size() - send_offset_);
  stats_->bytes_sent += bytes;
  send_offset_ += bytes;
  if (send_offset_ == send_buffer_.size()) {
    send_buffer_.clear();
    send_offset_ = 0;
  }
}

void Exchange::OnReceived(absl::string_view bytes, int64_t now_ns) {
  if (!active() || bytes.empty()) return;
  phase_ = Phase::kExchanging;  // an answer proves the connection, whatever was reported
  stats_->bytes_received += bytes.size();
  if (response_.size() + bytes.size() > config_->max_response_bytes) {
    FailMismatch(CheckResult::Wrong("response too large",
                                    absl::StrCat("more than ", config_->max_response_bytes,
                                                 " bytes (--max-response-bytes)")),
                 now_ns);
    return;
  }
  // The usual case, a whole answer in one piece, is judged where it lies, without a copy.
  const bool copied = !response_.empty();
  if (copied) response_.append(bytes.data(), bytes.size());
  absl::string_view stream = copied ? absl::string_view(response_) : bytes;
  if (config_->queries_per_conn == 1) {
    JudgeUnframed(stream, /*closed=*/false, now_ns);
    if (active() && !copied) response_.assign(bytes.data(), bytes.size());
    return;
  }
  JudgeFramed(&stream, now_ns);
  if (!active()) return;
  if (copied) {
    response_.erase(0, response_.size() - stream.size());
  } else {
    response_.assign(stream.data(), stream.size());
  }
  // The next window once this one is answered: a query sent while an earlier one is unacknowledged
  // would wait for Nagle's algorithm (RFC 896), which only a per-connection TCP_NODELAY lifts.
  if (pending_.empty()) QueueQueries(now_ns);
}

void Exchange::JudgeUnframed(absl::string_view stream, bool closed, int64_t now_ns) {
  CheckResult result = requests_->protocol().Check(pending_.front().request, stream, closed);
  if (result.verdict == Verdict::kIncomplete && closed) {
    result = CheckResult::Short("closed before a whole response");
  }
  if (result.verdict == Verdict::kIncomplete) return;
  if (result.verdict != Verdict::kOk) {
    FailMismatch(result, now_ns);
    return;
  }
  AnswerOne(0, now_ns);
  Succeed(now_ns);
}

void Exchange::JudgeFramed(absl::string_view* stream, int64_t now_ns) {
  const ProtocolClient& protocol = requests_->protocol();
  while (active() && !pending_.empty()) {
    size_t length = protocol.FrameLength(*stream);
    if (length == 0) return;  // the rest of the message is still on its way
    if (length == ProtocolClient::kUnframed) length = stream->size();
    absl::string_view message = stream->substr(0, length);
    // The query it answers: the one with its key, else the oldest (whose check then says what
    // is wrong with it).
    const uint32_t key = protocol.MatchKey(message);
    size_t index = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (protocol.MatchKey(pending_[i].request) == key) {
        index = i;
        break;
      }
    }
    CheckResult result = protocol.Check(pending_[index].request, message, /*closed=*/false);
    if (result.verdict == Verdict::kIncomplete) {
      result = CheckResult::Wrong("whole message not judged whole");
    }
    if (result.verdict != Verdict::kOk) {
      FailMismatch(result, now_ns);
      return;
    }
    stream->remove_prefix(length);
    AnswerOne(index, now_ns);
    if (answered_ == config_->queries_per_conn) Succeed(now_ns);
  }
}

void Exchange::AnswerOne(size_t pending_index, int64_t now_ns) {
  ++stats_->queries_ok;
  // The connection's first answer waited for the connection too: from the origin.
  const int64_t from = answered_ == 0 ? origin_ns_ : pending_[pending_index].sent_ns;
  stats_->query_latency.Record(static_cast<uint64_t>(std::max<int64_t>(0, now_ns - from)));
  spare_.push_back(std::move(pending_[pending_index]));
  pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(pending_index));
  ++answered_;
}

void Exchange::OnPeerClosed(int64_t now_ns) {
  if (!active()) return;
  if (config_->queries_per_conn == 1) {
    JudgeUnframed(response_, /*closed=*/true, now_ns);
    return;
  }
  FailMismatch(
      CheckResult::Short("closed before all answers",
                         absl::StrCat(answered_, " of ", config_->queries_per_conn, " answered")),
      now_ns);
}

void Exchange::OnError(int error, int64_t now_ns) {
  if (!active()) return;
  // A server that closes after some of several answers resets the query sent after its close
  // (RFC 793 §3.4) or its FIN is read as EPIPE: the same early end as a plain close.
  if (config_->queries_per_conn > 1 && answered_ > 0 && response_.empty() &&
      (error == ECONNRESET || error == EPIPE)) {
    FailMismatch(
        CheckResult::Short("closed before all answers",
                           absl::StrCat(answered_, " of ", config_->queries_per_conn, " answered")),
        now_ns);
    return;
  }
  const ErrorKind kind = ErrorKindOfErrno(error, phase_ == Phase::kConnecting);
  RecordLocalErrno(kind, error, config_->max_samples, stats_);
  Fail(kind, now_ns);
}

void Exchange::OnTimeout(int64_t now_ns) {
  if (active()) Fail(ErrorKind::kTimeout, now_ns);
}

void Exchange::OnTransportFailed(ErrorKind kind, const char* reason, const std::string& detail,
                                 int64_t now_ns) {
  if (!active()) return;
  if (reason != nullptr) RecordReason(reason, detail, config_->max_samples, stats_);
  Fail(kind, now_ns);
}

void Exchange::Succeed(int64_t now_ns) {
  phase_ = Phase::kEnded;
  succeeded_ = true;
  ++stats_->ok;
  stats_->latency.Record(static_cast<uint64_t>(std::max<int64_t>(0, now_ns - origin_ns_)));
}

void Exchange::Fail(ErrorKind kind, int64_t now_ns) {
  phase_ = Phase::kEnded;
  succeeded_ = false;
  ++stats_->errors[static_cast<int>(kind)];
}

void Exchange::FailMismatch(const CheckResult& result, int64_t now_ns) {
  Fail(RecordMismatch(result, config_->max_samples, stats_), now_ns);
}

}  // namespace onepass::load
