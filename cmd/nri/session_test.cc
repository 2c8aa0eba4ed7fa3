#include "nri/session.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/nri_peer.h"

namespace ocirlimit::nri {
namespace {

using testsupport::ParseSent;
using testsupport::RawFrame;
using testsupport::RuntimeCall;
using testsupport::RuntimeReply;
using testsupport::Sent;

// Echoes "method:payload", or a reply of `big` bytes for method "Big".
class EchoService : public PluginService {
 public:
  Reply Call(std::string_view method, std::string_view payload) override {
    calls.emplace_back(method);
    if (method == "Big") return {std::string(big, 'b'), {}};
    if (method == "Fail") return {"", {9, "no"}};
    return {std::string(method) + ":" + std::string(payload), {}};
  }
  std::vector<std::string> calls;
  size_t big = 10000;
};

struct Fixture {
  EchoService svc;
  Session session{svc, "register-bytes"};
};

TEST(Session, StartsWithRegisterPluginOnConnection2Stream1) {
  Fixture f;
  auto sent = ParseSent(f.session.Start());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].conn, kRuntimeConn);
  EXPECT_EQ(sent[0].msg.stream_id, 1u);
  EXPECT_EQ(sent[0].msg.type, MsgType::kRequest);
  EXPECT_EQ(sent[0].msg.flags, 0);
  auto req = DecodeRequest(sent[0].msg.payload);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->service, "nri.pkg.api.v1alpha1.Runtime");
  EXPECT_EQ(req->method, "RegisterPlugin");
  EXPECT_EQ(req->payload, "register-bytes");
  EXPECT_FALSE(f.session.registered());
}

TEST(Session, RegisteredWhenTheRuntimeAnswersStream1) {
  Fixture f;
  (void)f.session.Start();
  std::string out;
  ASSERT_TRUE(f.session.OnBytes(RuntimeReply(7, {}), out).ok());  // not our stream
  EXPECT_FALSE(f.session.registered());
  ASSERT_TRUE(f.session.OnBytes(RuntimeReply(1, {}), out).ok());
  EXPECT_TRUE(f.session.registered());
  EXPECT_TRUE(out.empty());
}

TEST(Session, RefusedRegistrationIsAnErrorNamingTheRuntimesMessage) {
  Fixture f;
  (void)f.session.Start();
  std::string out;
  Status st = f.session.OnBytes(RuntimeReply(1, {{3, "plugin name\nin use"}, ""}), out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().Text().find("refused RegisterPlugin: code 3: plugin name\\nin use"),
            std::string::npos)
      << st.error().Text();
}

struct CallCase {
  std::string name;
  std::vector<uint32_t> streams;  // the runtime's stream ids, one call each
  size_t chunk;                   // bytes per read (0: all at once)
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const CallCase& c, std::ostream* os) { *os << c.name; }

class CallTable : public ::testing::TestWithParam<CallCase> {};

TEST_P(CallTable, EachCallAnsweredOnItsStream) {
  Fixture f;
  (void)f.session.Start();
  std::string in;
  for (uint32_t id : GetParam().streams) in += RuntimeCall(id, "M" + std::to_string(id), "p");
  std::string out;
  size_t step = GetParam().chunk == 0 ? in.size() : GetParam().chunk;
  for (size_t at = 0; at < in.size(); at += step) {
    ASSERT_TRUE(f.session.OnBytes(std::string_view(in).substr(at, step), out).ok());
  }
  auto sent = ParseSent(out);
  ASSERT_EQ(sent.size(), GetParam().streams.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    uint32_t id = GetParam().streams[i];
    EXPECT_EQ(sent[i].conn, kPluginConn);
    EXPECT_EQ(sent[i].msg.stream_id, id);
    EXPECT_EQ(sent[i].msg.type, MsgType::kResponse);
    auto resp = DecodeResponse(sent[i].msg.payload);
    ASSERT_TRUE(resp.ok());
    EXPECT_EQ(resp->status.code, 0);
    EXPECT_EQ(resp->payload, "M" + std::to_string(id) + ":p");
  }
}

INSTANTIATE_TEST_SUITE_P(Session, CallTable,
                         ::testing::Values(CallCase{"One", {1}, 0},
                                           CallCase{"SeveralInOneFrameRead", {1, 3, 5}, 0},
                                           CallCase{"SplitAcrossReads", {1, 3}, 7},
                                           CallCase{"ByteAtATime", {9}, 1},
                                           CallCase{"LargeStreamIds", {0x7ffffff1}, 0}),
                         [](const auto& info) { return info.param.name; });

TEST(Session, SeveralMessagesInOneFrame) {
  Fixture f;
  std::string msgs =
      *EncodeMessage(
          {1, MsgType::kRequest, 0, EncodeRequest({std::string(kPluginService), "A", "", 0, {}})}) +
      *EncodeMessage(
          {3, MsgType::kRequest, 0, EncodeRequest({std::string(kPluginService), "B", "", 0, {}})});
  std::string in;
  AppendFrames(in, kPluginConn, msgs);
  ASSERT_EQ(in.size(), kFrameHeader + msgs.size());  // one frame
  std::string out;
  ASSERT_TRUE(f.session.OnBytes(in, out).ok());
  EXPECT_EQ(f.svc.calls, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(ParseSent(out).size(), 2u);
}

TEST(Session, OversizedReplySplitInto4096ByteFrames) {
  Fixture f;
  std::string out;
  ASSERT_TRUE(f.session.OnBytes(RuntimeCall(1, "Big", ""), out).ok());
  auto sent = ParseSent(out);
  ASSERT_EQ(sent.size(), 1u);
  auto resp = DecodeResponse(sent[0].msg.payload);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->payload.size(), 10000u);
  // 10 header + 3-byte field header + 10000: 10013 bytes in 4096-byte frames.
  EXPECT_EQ(sent[0].frames, (std::vector<size_t>{4096, 4096, 1821}));
}

TEST(Session, UnknownServiceIsUnimplemented) {
  Fixture f;
  std::string out;
  ASSERT_TRUE(f.session.OnBytes(RuntimeCall(1, "Configure", "", "other.Service"), out).ok());
  auto sent = ParseSent(out);
  ASSERT_EQ(sent.size(), 1u);
  auto resp = DecodeResponse(sent[0].msg.payload);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status.code, kCodeUnimplemented);
  EXPECT_TRUE(f.svc.calls.empty());
}

TEST(Session, ServiceErrorsReachTheRuntime) {
  Fixture f;
  std::string out;
  ASSERT_TRUE(f.session.OnBytes(RuntimeCall(5, "Fail", ""), out).ok());
  auto resp = DecodeResponse(ParseSent(out).at(0).msg.payload);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, (RpcStatus{9, "no"}));
}

TEST(Session, MalformedRequestEnvelopeIsAnErrorReplyNotADisconnect) {
  Fixture f;
  std::string in;
  AppendFrames(in, kPluginConn, *EncodeMessage({1, MsgType::kRequest, 0, "\x0a\x7f"}));
  std::string out;
  ASSERT_TRUE(f.session.OnBytes(in, out).ok());
  auto resp = DecodeResponse(ParseSent(out).at(0).msg.payload);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status.code, kCodeInvalidArgument);
}

TEST(Session, StrayDataAndResponsesOnConnection1AreIgnored) {
  Fixture f;
  std::string in;
  AppendFrames(in, kPluginConn, *EncodeMessage({1, MsgType::kData, 0, "d"}));
  AppendFrames(in, kPluginConn, *EncodeMessage({3, MsgType::kResponse, 0, ""}));
  std::string out;
  ASSERT_TRUE(f.session.OnBytes(in, out).ok());
  EXPECT_TRUE(out.empty());
}

struct BrokenCase {
  std::string name;
  std::string bytes;
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const BrokenCase& c, std::ostream* os) { *os << c.name; }

class BrokenTable : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenTable, GarbageLengthIsAnErrorToDisconnectOn) {
  Fixture f;
  std::string out;
  Status st = f.session.OnBytes(GetParam().bytes, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().Text().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Session, BrokenTable,
    ::testing::Values(
        BrokenCase{"FrameLength", RawFrame(1, 0xfffffff0)},
        // A frame whose ttrpc header claims more than 4 MiB.
        BrokenCase{"TtrpcLengthOnConn1",
                   RawFrame(1, 10, std::string("\x7f\xff\xff\xff\0\0\0\x01\x01\0", 10))},
        BrokenCase{"TtrpcLengthOnConn2",
                   RawFrame(2, 10, std::string("\x00\x40\x00\x01\0\0\0\x01\x02\0", 10))}),
    [](const auto& info) { return info.param.name; });

TEST(Session, TruncatedFrameAtEofIsNamed) {
  Fixture f;
  std::string out;
  std::string call = RuntimeCall(1, "Configure", "");
  ASSERT_TRUE(f.session.OnBytes(call.substr(0, call.size() - 3), out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_NE(f.session.EofReason().find("in the middle of a"), std::string::npos)
      << f.session.EofReason();
}

TEST(Session, CleanEofBeforeRegistration) {
  Fixture f;
  EXPECT_EQ(f.session.EofReason(),
            "the runtime closed the connection before registration completed");
}

}  // namespace
}  // namespace ocirlimit::nri

namespace ocirlimit::nri {
namespace {

TEST(Session, MessageCutBetweenFramesAtEofIsNamed) {
  EchoService svc;
  Session session(svc, "");
  std::string msg = *EncodeMessage(
      {1, MsgType::kRequest, 0, EncodeRequest({std::string(kPluginService), "A", "", 0, {}})});
  std::string in;
  AppendFrames(in, kPluginConn, msg.substr(0, 5));  // a whole frame, half a message
  std::string out;
  ASSERT_TRUE(session.OnBytes(in, out).ok());
  EXPECT_NE(session.EofReason().find("middle of a ttrpc message"), std::string::npos);
}

}  // namespace
}  // namespace ocirlimit::nri
