#include "nri/wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ocirlimit::nri {
namespace {

auto ByName = [](const auto& info) { return info.param.name; };

std::string U32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// A raw frame, with any length field, for cases AppendFrames would not make.
std::string Frame(uint32_t conn, const std::string& payload) {
  return U32(conn) + U32(static_cast<uint32_t>(payload.size())) + payload;
}

// --- Demux --------------------------------------------------------------------

struct DemuxCase {
  std::string name;
  std::string bytes;
  size_t chunk;  // fed this many bytes at a time (0: all at once)
  bool ok;
  std::string conn1;
  std::string conn2;
  bool idle;  // no partial frame left
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const DemuxCase& c, std::ostream* os) { *os << c.name; }

class DemuxTable : public ::testing::TestWithParam<DemuxCase> {};

TEST_P(DemuxTable, ReassemblesEachConnection) {
  const DemuxCase& c = GetParam();
  Demux d;
  Status st = Ok{};
  size_t step = c.chunk == 0 ? c.bytes.size() : c.chunk;
  for (size_t at = 0; at < c.bytes.size() && st; at += step) {
    st = d.Feed(std::string_view(c.bytes).substr(at, step));
  }
  ASSERT_EQ(st.ok(), c.ok) << (st ? "" : st.error().Text());
  if (!c.ok) {
    EXPECT_EQ(st.error().Text().find('\n'), std::string::npos);
    return;
  }
  EXPECT_EQ(d.Stream(kPluginConn), c.conn1);
  EXPECT_EQ(d.Stream(kRuntimeConn), c.conn2);
  EXPECT_EQ(d.Idle(), c.idle);
}

INSTANTIATE_TEST_SUITE_P(
    Wire, DemuxTable,
    ::testing::Values(
        DemuxCase{"OneFrame", Frame(1, "hello"), 0, true, "hello", "", true},
        DemuxCase{"MessageSplitAcrossFrames", Frame(1, "hel") + Frame(1, "lo"), 0, true, "hello",
                  "", true},
        DemuxCase{"ByteAtATime", Frame(1, "ab") + Frame(2, "cd"), 1, true, "ab", "cd", true},
        DemuxCase{"InterleavedConnections", Frame(2, "x") + Frame(1, "y") + Frame(2, "z"), 3, true,
                  "y", "xz", true},
        DemuxCase{"UnknownIdsDropped", Frame(0, "zero") + Frame(7, "seven") + Frame(1, "one"), 0,
                  true, "one", "", true},
        DemuxCase{"EmptyFrame", Frame(1, "") + Frame(1, "a"), 0, true, "a", "", true},
        DemuxCase{"TruncatedPayloadWaits", Frame(1, "abcdef").substr(0, 10), 0, true, "", "",
                  false},
        DemuxCase{"TruncatedHeaderWaits", Frame(1, "a").substr(0, 5), 0, true, "", "", false},
        DemuxCase{"GarbageLength", U32(1) + U32(0xffffffff) + "x", 0, false, "", "", false},
        DemuxCase{"LengthJustOverLimit", U32(2) + U32(kMaxRecvFrame + 1), 0, false, "", "", false},
        DemuxCase{"GarbageAfterGoodFrame", Frame(1, "ok") + U32(1) + U32(0x7fffffff), 0, false, "",
                  "", false}),
    ByName);

// --- AppendFrames -----------------------------------------------------------

struct FramesCase {
  std::string name;
  size_t payload;
  std::vector<size_t> frames;  // payload bytes of each frame sent
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const FramesCase& c, std::ostream* os) { *os << c.name; }

class FramesTable : public ::testing::TestWithParam<FramesCase> {};

TEST_P(FramesTable, NeverOver4096PayloadBytes) {
  const FramesCase& c = GetParam();
  std::string payload(c.payload, 'p');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  std::string out;
  AppendFrames(out, kPluginConn, payload);
  std::vector<size_t> sizes;
  std::string joined;
  for (size_t at = 0; at < out.size();) {
    ASSERT_GE(out.size() - at, kFrameHeader);
    EXPECT_EQ(out.substr(at, 4), U32(kPluginConn));
    uint32_t len = static_cast<uint32_t>(static_cast<unsigned char>(out[at + 4])) << 24 |
                   static_cast<uint32_t>(static_cast<unsigned char>(out[at + 5])) << 16 |
                   static_cast<uint32_t>(static_cast<unsigned char>(out[at + 6])) << 8 |
                   static_cast<uint32_t>(static_cast<unsigned char>(out[at + 7]));
    sizes.push_back(len);
    joined += out.substr(at + kFrameHeader, len);
    at += kFrameHeader + len;
  }
  EXPECT_EQ(sizes, c.frames);
  EXPECT_EQ(joined, payload);
}

INSTANTIATE_TEST_SUITE_P(Wire, FramesTable,
                         ::testing::Values(FramesCase{"Empty", 0, {}}, FramesCase{"One", 1, {1}},
                                           FramesCase{"Exactly4096", 4096, {4096}},
                                           FramesCase{"Just4097", 4097, {4096, 1}},
                                           FramesCase{"TenKilobytes", 10240, {4096, 4096, 2048}}),
                         ByName);

// --- ttrpc messages -----------------------------------------------------------

std::string Msg(uint32_t stream, MsgType type, const std::string& payload) {
  return *EncodeMessage({stream, type, 0, payload});
}

TEST(TtrpcMessage, HeaderLayout) {
  EXPECT_EQ(Msg(3, MsgType::kResponse, "ab"), std::string("\0\0\0\x02\0\0\0\x03\x02\0ab", 12));
}

struct TakeCase {
  std::string name;
  std::string stream;
  bool ok;
  std::vector<Message> messages;
  size_t left;  // bytes of a partial message left in the stream
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const TakeCase& c, std::ostream* os) { *os << c.name; }

class TakeTable : public ::testing::TestWithParam<TakeCase> {};

TEST_P(TakeTable, TakesCompleteMessages) {
  const TakeCase& c = GetParam();
  std::string stream = c.stream;
  std::vector<Message> got;
  Status st = TakeMessages(stream, got);
  ASSERT_EQ(st.ok(), c.ok);
  EXPECT_EQ(got, c.messages);
  if (c.ok) {
    EXPECT_EQ(stream.size(), c.left);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Wire, TakeTable,
    ::testing::Values(
        TakeCase{"One", Msg(1, MsgType::kRequest, "x"), true, {{1, MsgType::kRequest, 0, "x"}}, 0},
        TakeCase{"SeveralInOneRead",
                 Msg(1, MsgType::kRequest, "a") + Msg(3, MsgType::kRequest, "bb") +
                     Msg(5, MsgType::kRequest, ""),
                 true,
                 {{1, MsgType::kRequest, 0, "a"},
                  {3, MsgType::kRequest, 0, "bb"},
                  {5, MsgType::kRequest, 0, ""}},
                 0},
        TakeCase{"PartialStays",
                 Msg(1, MsgType::kRequest, "a") + Msg(3, MsgType::kRequest, "bcd").substr(0, 12),
                 true,
                 {{1, MsgType::kRequest, 0, "a"}},
                 12},
        TakeCase{"OverFourMiB",
                 U32(kTtrpcMaxMessage + 1) + U32(1) + std::string("\x01\x00", 2),
                 false,
                 {},
                 0},
        TakeCase{"ExactlyFourMiBHeaderWaits",
                 U32(kTtrpcMaxMessage) + U32(1) + std::string("\x01\x00", 2) + "abc",
                 true,
                 {},
                 13}),
    ByName);

TEST(TtrpcMessage, RefusesToEncodeOverFourMiB) {
  EXPECT_FALSE(
      EncodeMessage({1, MsgType::kResponse, 0, std::string(kTtrpcMaxMessage + 1, 'x')}).ok());
}

// --- envelopes ----------------------------------------------------------------

TEST(TtrpcEnvelope, RequestRoundTrips) {
  Request r{"nri.pkg.api.v1alpha1.Plugin",
            "CreateContainer",
            std::string("\0\x01\xff", 3),
            2000000000,
            {{"k", "v"}, {"", "x"}}};
  auto back = DecodeRequest(EncodeRequest(r));
  ASSERT_TRUE(back.ok()) << back.error().Text();
  EXPECT_EQ(*back, r);
}

TEST(TtrpcEnvelope, RequestBytesAsProtobufWritesThem) {
  // Field 1 "s", field 2 "m", field 4 varint 300.
  Request r{"s", "m", "", 300, {}};
  EXPECT_EQ(EncodeRequest(r), std::string("\x0a\x01s\x12\x01m\x20\xac\x02", 9));
}

TEST(TtrpcEnvelope, ResponseRoundTrips) {
  for (const Response& r : {Response{{0, ""}, "payload"}, Response{{12, "nope"}, ""},
                            Response{{-1, "negative"}, "p"}}) {
    auto back = DecodeResponse(EncodeResponse(r));
    ASSERT_TRUE(back.ok()) << back.error().Text();
    EXPECT_EQ(*back, r);
  }
}

TEST(TtrpcEnvelope, ResponseSkipsStatusDetailsAndUnknownFields) {
  // status {code 5, message "m", details (3) bytes}, field 9 fixed64, payload "p".
  std::string status = std::string("\x08\x05\x12\x01m\x1a\x02xy", 9);
  std::string bytes = "\x0a" + std::string(1, static_cast<char>(status.size())) + status +
                      std::string("\x49", 1) + std::string(8, '\0') + "\x12\x01p";
  auto r = DecodeResponse(bytes);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(r->status, (RpcStatus{5, "m"}));
  EXPECT_EQ(r->payload, "p");
}

struct BadEnvelope {
  std::string name;
  std::string bytes;
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const BadEnvelope& c, std::ostream* os) { *os << c.name; }

class BadRequestTable : public ::testing::TestWithParam<BadEnvelope> {};

TEST_P(BadRequestTable, IsAnErrorNotACrash) {
  auto r = DecodeRequest(GetParam().bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text().find('\n'), std::string::npos);
  EXPECT_FALSE(DecodeResponse(GetParam().bytes).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Wire, BadRequestTable,
    ::testing::Values(BadEnvelope{"LengthPastEnd", std::string("\x0a\x05"
                                                               "ab",
                                                               4)},
                      BadEnvelope{"UnterminatedVarint", std::string("\x20\xff\xff", 3)},
                      BadEnvelope{"ElevenByteVarint", "\x20" + std::string(10, '\xff') + "\x01"},
                      BadEnvelope{"FieldZero", std::string("\x02\x00", 2)},
                      BadEnvelope{"GroupWireType", std::string("\x0b", 1)},
                      BadEnvelope{"WrongWireTypeForString", std::string("\x08\x01\x10\x01", 4)},
                      BadEnvelope{"Fixed32PastEnd", std::string("\x0d\x01\x02", 3)}),
    ByName);

}  // namespace
}  // namespace ocirlimit::nri
