#include "nri/serve.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

namespace ocirlimit::nri {
namespace {

int64_t Now(const ServeOptions& opt) {
  if (opt.now_us) return opt.now_us();
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ReplyFate Fate(const Session& session, const Status& sent, int64_t elapsed_us) {
  ReplyFate f;
  f.answered = session.last_batch().answered;
  if (session.last_batch().deadline_ns > 0) f.deadline_us = session.last_batch().deadline_ns / 1000;
  f.elapsed_us = elapsed_us;
  f.sent = sent.ok();
  if (!sent) f.why = sent.error().Text();
  f.late = f.sent && elapsed_us > f.deadline_us;
  return f;
}

// Writes `out` to the runtime, if anything, and clears it.
Status Send(Conn& conn, std::string& out, const ServeOptions& opt) {
  if (out.empty()) return Ok{};
  Status st = conn.Write(out, opt.write_timeout_ms);
  out.clear();
  return st;
}

// Reads what the runtime sent and answers it: why the connection ends, or
// nullopt to go on.
std::optional<std::string> ReadAndAnswer(Conn& conn, Session& session, const ServeOptions& opt) {
  const int64_t read_at = Now(opt);
  auto got = conn.Read();
  if (!got) return got.error().Text();
  if (got->eof) return session.EofReason();
  if (opt.before_replies) opt.before_replies();
  std::string out;
  Status fed = session.OnBytes(got->data, out);
  // Replies produced before a protocol error still go out.
  Status sent = Send(conn, out, opt);
  if (opt.after_replies) opt.after_replies(Fate(session, sent, Now(opt) - read_at));
  if (!fed) return fed.error().Text();
  if (!sent) return sent.error().Wrap("send reply").Text();
  return std::nullopt;
}

}  // namespace

ConnEnd ServeConnection(Conn& conn, Session& session, const ServeOptions& opt) {
  ConnEnd end;
  std::string out = session.Start();
  if (auto st = Send(conn, out, opt); !st) {
    end.why = st.error().Wrap("send RegisterPlugin").Text();
    return end;
  }
  int waited = 0;
  for (;;) {
    auto wake = conn.Wait(opt.tick_ms);
    if (!wake) {
      end.why = wake.error().Text();
      break;
    }
    if (*wake == Wake::kSignal) {
      if (opt.on_signal()) {
        end.stop = true;
        break;
      }
      continue;
    }
    if (opt.on_tick) opt.on_tick();
    if (*wake == Wake::kTimeout) {
      if (!session.registered() && ++waited >= opt.register_ticks) {
        end.why = "no reply to RegisterPlugin within " +
                  std::to_string(opt.register_ticks * opt.tick_ms / 1000) + " s";
        break;
      }
      continue;
    }
    if (auto why = ReadAndAnswer(conn, session, opt)) {
      end.why = std::move(*why);
      break;
    }
  }
  end.registered = session.registered();
  return end;
}

int Serve(Connector& connector, const ServeOptions& opt) {
  int backoff = opt.backoff_min_ms;
  int failures = 0;
  for (;;) {
    auto conn = connector.Connect();
    if (conn) {
      if (opt.on_connect) opt.on_connect(**conn);
      auto session = opt.new_session();
      ConnEnd end = ServeConnection(**conn, *session, opt);
      if (opt.on_disconnect) opt.on_disconnect();
      if (end.stop) return 0;
      opt.say("disconnected: " + end.why);
      if (!opt.reconnect) {
        opt.say(
            "a pre-registered plugin cannot reconnect; the runtime creates containers "
            "unadjusted until it restarts the plugin");
        return 1;
      }
      if (end.registered) backoff = opt.backoff_min_ms;
      failures = 0;
    } else {
      if (!opt.reconnect) {
        opt.say(conn.error().Text());
        return 1;
      }
      // Said on the first failure and then about once a minute, not every 100 ms.
      if (failures++ % 16 == 0) opt.say(conn.error().Text() + "; retrying");
    }
    int slept = 0;
    while (slept < backoff) {
      int step = std::min(opt.tick_ms, backoff - slept);
      if (connector.Sleep(step) == Wake::kSignal) {
        if (opt.on_signal()) return 0;
      } else if (opt.on_tick) {
        opt.on_tick();
      }
      slept += step;
    }
    backoff = std::min(backoff * 2, opt.backoff_max_ms);
  }
}

}  // namespace ocirlimit::nri
