#include "nri/wire.h"

#include <algorithm>

namespace ocirlimit::nri {
namespace {

void PutU32(std::string& out, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, 4);
}

uint32_t GetU32(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

// --- protobuf wire format, the little that the envelopes need ---

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutTag(std::string& out, uint32_t field, uint32_t wire) { PutVarint(out, field << 3 | wire); }

void PutBytes(std::string& out, uint32_t field, std::string_view v) {
  PutTag(out, field, 2);
  PutVarint(out, v.size());
  out.append(v);
}

// Proto3: fields at their default value are not written.
void PutBytesIfSet(std::string& out, uint32_t field, std::string_view v) {
  if (!v.empty()) PutBytes(out, field, v);
}

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool done() const { return at_ == s_.size(); }

  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == s_.size()) return false;
      auto b = static_cast<unsigned char>(s_[at_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;  // more than 10 bytes
  }

  bool Bytes(std::string_view& v) {
    uint64_t n = 0;
    if (!Varint(n) || n > s_.size() - at_) return false;
    v = s_.substr(at_, n);
    at_ += n;
    return true;
  }

  bool Skip(uint32_t wire) {
    uint64_t ignored = 0;
    std::string_view bytes;
    switch (wire) {
      case 0:
        return Varint(ignored);
      case 1:
        return Advance(8);
      case 2:
        return Bytes(bytes);
      case 5:
        return Advance(4);
      default:
        return false;  // groups (3, 4) and reserved types
    }
  }

 private:
  bool Advance(size_t n) {
    if (n > s_.size() - at_) return false;
    at_ += n;
    return true;
  }
  std::string_view s_;
  size_t at_ = 0;
};

// Calls on_field(field, wire, reader) for each field; on_field consumes the
// value and returns false when its type is wrong or it is malformed.
template <class F>
Status ForEachField(std::string_view bytes, const char* what, F on_field) {
  Reader r(bytes);
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(tag) || tag >> 3 == 0 || tag >> 3 > UINT32_MAX) {
      return MakeError(std::string("ttrpc ") + what + ": malformed field tag");
    }
    auto field = static_cast<uint32_t>(tag >> 3);
    auto wire = static_cast<uint32_t>(tag & 7);
    if (!on_field(field, wire, r)) {
      return MakeError(std::string("ttrpc ") + what + ": malformed field " + std::to_string(field));
    }
  }
  return Ok{};
}

bool ReadString(uint32_t wire, Reader& r, std::string& into) {
  std::string_view v;
  if (wire != 2 || !r.Bytes(v)) return false;
  into.assign(v);
  return true;
}

}  // namespace

void AppendFrameHeader(std::string& out, const FrameHeader& h) {
  PutU32(out, h.conn);
  PutU32(out, h.length);
}

FrameHeader ReadFrameHeader(std::string_view bytes) { return {GetU32(bytes, 0), GetU32(bytes, 4)}; }

void AppendFrames(std::string& out, uint32_t conn, std::string_view payload) {
  while (!payload.empty()) {
    size_t n = std::min(payload.size(), kMaxSendFrame);
    AppendFrameHeader(out, {conn, static_cast<uint32_t>(n)});
    out.append(payload.substr(0, n));
    payload.remove_prefix(n);
  }
}

Status Demux::Feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t at = 0;
  while (pending_.size() - at >= kFrameHeader) {
    const auto [conn, len] = ReadFrameHeader(std::string_view(pending_).substr(at));
    if (len > kMaxRecvFrame) {
      pending_.clear();
      return MakeError("multiplexer frame for connection " + std::to_string(conn) + " is " +
                       std::to_string(len) + " bytes long, over the limit of " +
                       std::to_string(kMaxRecvFrame));
    }
    if (pending_.size() - at - kFrameHeader < len) break;
    if (conn == kPluginConn || conn == kRuntimeConn) {
      Stream(conn).append(pending_, at + kFrameHeader, len);
    }
    at += kFrameHeader + len;
  }
  pending_.erase(0, at);
  return Ok{};
}

Result<std::string> EncodeMessage(const Message& m) {
  if (m.payload.size() > kTtrpcMaxMessage) {
    return MakeError("ttrpc message of " + std::to_string(m.payload.size()) +
                     " bytes is over the limit of " + std::to_string(kTtrpcMaxMessage));
  }
  std::string out;
  out.reserve(kTtrpcHeader + m.payload.size());
  PutU32(out, static_cast<uint32_t>(m.payload.size()));
  PutU32(out, m.stream_id);
  out.push_back(static_cast<char>(m.type));
  out.push_back(static_cast<char>(m.flags));
  out.append(m.payload);
  return out;
}

Status TakeMessages(std::string& stream, std::vector<Message>& out) {
  size_t at = 0;
  Status st = Ok{};
  while (stream.size() - at >= kTtrpcHeader) {
    uint32_t len = GetU32(stream, at);
    if (len > kTtrpcMaxMessage) {
      st = MakeError("ttrpc message length " + std::to_string(len) + " is over the limit of " +
                     std::to_string(kTtrpcMaxMessage));
      at = stream.size();
      break;
    }
    if (stream.size() - at - kTtrpcHeader < len) break;
    Message m;
    m.stream_id = GetU32(stream, at + 4);
    m.type = static_cast<MsgType>(static_cast<unsigned char>(stream[at + 8]));
    m.flags = static_cast<uint8_t>(stream[at + 9]);
    m.payload.assign(stream, at + kTtrpcHeader, len);
    out.push_back(std::move(m));
    at += kTtrpcHeader + len;
  }
  stream.erase(0, at);
  return st;
}

std::string EncodeRequest(const Request& r) {
  std::string out;
  PutBytesIfSet(out, 1, r.service);
  PutBytesIfSet(out, 2, r.method);
  PutBytesIfSet(out, 3, r.payload);
  if (r.timeout_nano != 0) {
    PutTag(out, 4, 0);
    PutVarint(out, static_cast<uint64_t>(r.timeout_nano));
  }
  for (const auto& [k, v] : r.metadata) {
    std::string kv;
    PutBytesIfSet(kv, 1, k);
    PutBytesIfSet(kv, 2, v);
    PutBytes(out, 5, kv);
  }
  return out;
}

Result<Request> DecodeRequest(std::string_view bytes) {
  Request r;
  auto st = ForEachField(bytes, "request", [&](uint32_t field, uint32_t wire, Reader& rd) {
    switch (field) {
      case 1:
        return ReadString(wire, rd, r.service);
      case 2:
        return ReadString(wire, rd, r.method);
      case 3:
        return ReadString(wire, rd, r.payload);
      case 4: {
        uint64_t v = 0;
        if (wire != 0 || !rd.Varint(v)) return false;
        r.timeout_nano = static_cast<int64_t>(v);
        return true;
      }
      case 5: {
        std::string_view kv;
        if (wire != 2 || !rd.Bytes(kv)) return false;
        std::pair<std::string, std::string> entry;
        auto inner = ForEachField(kv, "request metadata", [&](uint32_t f, uint32_t w, Reader& ir) {
          if (f == 1) return ReadString(w, ir, entry.first);
          if (f == 2) return ReadString(w, ir, entry.second);
          return ir.Skip(w);
        });
        if (!inner) return false;
        r.metadata.push_back(std::move(entry));
        return true;
      }
      default:
        return rd.Skip(wire);
    }
  });
  if (!st) return st.error();
  return r;
}

std::string EncodeResponse(const Response& r) {
  std::string out;
  if (r.status.code != 0 || !r.status.message.empty()) {
    std::string status;
    if (r.status.code != 0) {
      PutTag(status, 1, 0);
      // int32 is sign-extended to 64 bits on the wire.
      PutVarint(status, static_cast<uint64_t>(static_cast<int64_t>(r.status.code)));
    }
    PutBytesIfSet(status, 2, r.status.message);
    PutBytes(out, 1, status);
  }
  PutBytesIfSet(out, 2, r.payload);
  return out;
}

Result<Response> DecodeResponse(std::string_view bytes) {
  Response r;
  auto st = ForEachField(bytes, "response", [&](uint32_t field, uint32_t wire, Reader& rd) {
    if (field == 2) return ReadString(wire, rd, r.payload);
    if (field != 1) return rd.Skip(wire);
    std::string_view status;
    if (wire != 2 || !rd.Bytes(status)) return false;
    auto inner = ForEachField(status, "status", [&](uint32_t f, uint32_t w, Reader& ir) {
      if (f == 1) {
        uint64_t v = 0;
        if (w != 0 || !ir.Varint(v)) return false;
        r.status.code = static_cast<int32_t>(v);
        return true;
      }
      if (f == 2) return ReadString(w, ir, r.status.message);
      return ir.Skip(w);  // 3: details
    });
    return inner.ok();
  });
  if (!st) return st.error();
  return r;
}

}  // namespace ocirlimit::nri
