#include "tests/testing/nri_peer.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ocirlimit::testsupport {

using nri::kFrameHeader;
using nri::kMaxSendFrame;
using nri::kPluginConn;
using nri::kRuntimeConn;

std::string RuntimeCall(uint32_t stream, std::string_view method, std::string_view payload,
                        std::string_view service, int64_t timeout_nano) {
  nri::Request r{std::string(service), std::string(method), std::string(payload), timeout_nano, {}};
  std::string out;
  nri::AppendFrames(
      out, kPluginConn,
      nri::EncodeMessage({stream, nri::MsgType::kRequest, 0, nri::EncodeRequest(r)}).value());
  return out;
}

std::string RuntimeReply(uint32_t stream, const nri::Response& resp) {
  std::string out;
  nri::AppendFrames(
      out, kRuntimeConn,
      nri::EncodeMessage({stream, nri::MsgType::kResponse, 0, nri::EncodeResponse(resp)}).value());
  return out;
}

std::string RawFrame(uint32_t conn, uint32_t length, std::string_view rest) {
  std::string out;
  nri::AppendFrameHeader(out, {conn, length});
  out.append(rest);
  return out;
}

Status PluginOutput::Feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t at = 0;
  Status st = Ok{};
  while (st && pending_.size() - at >= kFrameHeader) {
    const nri::FrameHeader h = nri::ReadFrameHeader(std::string_view(pending_).substr(at));
    if ((h.conn != kPluginConn && h.conn != kRuntimeConn) || h.length == 0 ||
        h.length > kMaxSendFrame) {
      st = MakeError("frame for connection " + std::to_string(h.conn) + " of " +
                     std::to_string(h.length) + " bytes: the runtime takes connection 1 or 2, " +
                     "1 to " + std::to_string(kMaxSendFrame) + " bytes");
      break;
    }
    if (pending_.size() - at - kFrameHeader < h.length) break;
    const size_t i = h.conn - 1;
    streams_[i].append(pending_, at + kFrameHeader, h.length);
    frames_[i].push_back(h.length);
    at += kFrameHeader + h.length;
    std::vector<nri::Message> msgs;
    st = nri::TakeMessages(streams_[i], msgs);
    for (auto& m : msgs) {
      done_.push_back({h.conn, std::move(m), std::move(frames_[i])});
      frames_[i].clear();
    }
  }
  pending_.erase(0, at);
  return st;
}

std::vector<Sent> PluginOutput::Take() { return std::exchange(done_, {}); }

bool PluginOutput::Complete() const {
  return pending_.empty() && streams_[0].empty() && streams_[1].empty();
}

std::vector<Sent> ParseSent(std::string_view bytes) {
  PluginOutput out;
  if (!out.Feed(bytes) || !out.Complete()) return {};
  return out.Take();
}

bool RuntimePeer::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::optional<Sent> RuntimePeer::Next() {
  char buf[65536];
  while (ready_.empty()) {
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (!output_.Feed(std::string_view(buf, static_cast<size_t>(n)))) return std::nullopt;
    for (auto& s : output_.Take()) ready_.push_back(std::move(s));
  }
  Sent s = std::move(ready_.front());
  ready_.pop_front();
  return s;
}

uint32_t RuntimePeer::NewStream() {
  const uint32_t id = next_stream_;
  next_stream_ += 2;
  return id;
}

std::optional<nri::Response> RuntimePeer::Call(std::string_view method, std::string_view payload,
                                               int64_t timeout_nano) {
  const uint32_t id = NewStream();
  if (!Send(RuntimeCall(id, method, payload, nri::kPluginService, timeout_nano))) {
    return std::nullopt;
  }
  auto got = Next();
  if (!got || got->conn != kPluginConn || got->msg.stream_id != id) return std::nullopt;
  auto resp = nri::DecodeResponse(got->msg.payload);
  if (!resp) return std::nullopt;
  return *resp;
}

}  // namespace ocirlimit::testsupport
