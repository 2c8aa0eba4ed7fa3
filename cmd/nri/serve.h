// The plugin's connection loop, over a small socket interface (serve_linux.cc
// has the real one, tests a fake): register, answer calls, and on EOF, a
// protocol error or a silent runtime, disconnect cleanly and (external mode)
// reconnect with back-off.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "formats/error.h"
#include "nri/session.h"

namespace ocirlimit::nri {

enum class Wake { kReadable, kTimeout, kSignal };

struct ReadResult {
  std::string data;  // empty and !eof: nothing there after all
  bool eof = false;
};

// The peer's credentials at connect (SO_PEERCRED).
struct PeerCred {
  int pid = 0;
  unsigned uid = 0;
};

class Conn {
 public:
  virtual ~Conn() = default;
  // Who is at the other end; nullopt when unknown (fakes).
  [[nodiscard]] virtual std::optional<PeerCred> Peer() const { return std::nullopt; }
  // Waits up to timeout_ms for bytes to read, or for a signal.
  virtual Result<Wake> Wait(int timeout_ms) = 0;
  virtual Result<ReadResult> Read() = 0;
  // Writes all of data within timeout_ms; a peer that stops reading is an error.
  virtual Status Write(std::string_view data, int timeout_ms) = 0;
};

class Connector {
 public:
  virtual ~Connector() = default;
  virtual Result<std::unique_ptr<Conn>> Connect() = 0;
  // Sleeps up to ms, returning early with kSignal when a signal arrives.
  virtual Wake Sleep(int ms) = 0;
};

// The runtime's request timeout when a call carries none (containerd and
// CRI-O: 2 s).
inline constexpr int kDefaultRequestTimeoutMs = 2000;

// What became of the replies to one batch of calls (one read's worth).
struct ReplyFate {
  int answered = 0;        // calls answered in the batch
  bool sent = true;        // the replies were written whole
  bool late = false;       // written after the tightest deadline of the batch
  int64_t elapsed_us = 0;  // from reading the calls to writing the replies
  int64_t deadline_us = int64_t{kDefaultRequestTimeoutMs} * 1000;
  std::string why;  // when !sent: the write's error
};

struct ServeOptions {
  // Handles pending signals (SIGHUP reloads); true means stop.
  std::function<bool()> on_signal;
  // After every wake but a signal's, connected or not (the config watch,
  // which keeps its own pace); may be empty.
  std::function<void()> on_tick;
  // Once per connection, before new_session; may be empty.
  std::function<void(const Conn&)> on_connect;
  // A new Session (and its service) per connection.
  std::function<std::unique_ptr<Session>()> new_session;
  std::function<void(const std::string&)> say;
  // After each connection ends (metrics: not connected); may be empty.
  std::function<void()> on_disconnect;
  // Around each batch of calls: before the calls are answered, and once
  // their replies went out, or did not, or too late (log lines about the
  // batch's containers wait for that: serve_linux.h).
  std::function<void()> before_replies;
  std::function<void(const ReplyFate&)> after_replies;
  // Microseconds on a monotonic clock (a fake in tests).
  std::function<int64_t()> now_us;
  bool reconnect = true;  // external mode; a pre-registered plugin cannot
  int tick_ms = 1000;
  int register_ticks = 5;       // the runtime's own registration timeout is 5 s
  int write_timeout_ms = 1000;  // well inside its 2 s request timeout
  int backoff_min_ms = 100;
  int backoff_max_ms = 5000;
};

struct ConnEnd {
  bool stop = false;  // asked to stop (SIGTERM)
  bool registered = false;
  std::string why;
};

// Serves one connection until it ends.
ConnEnd ServeConnection(Conn& conn, Session& session, const ServeOptions& opt);

// Connects, serves, and in external mode reconnects with back-off (reset
// after each registered connection) until stopped. Returns the exit status:
// 0 when stopped, 1 when a pre-registered connection ended.
int Serve(Connector& connector, const ServeOptions& opt);

}  // namespace ocirlimit::nri
