// The real socket, signals and output for oci-rlimit-nri (serve.h's
// interfaces over poll(2), a self-pipe and O_APPEND log lines).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nri/log_queue.h"
#include "nri/plugin.h"
#include "nri/serve.h"

namespace ocirlimit::nri {

// SIGHUP, SIGTERM and SIGINT through a self-pipe that every wait also polls;
// SIGPIPE ignored. Once per process.
[[nodiscard]] Status InstallSignals();
struct PendingSignals {
  bool reload = false;
  bool stop = false;
};
// Drains the self-pipe and says what came.
PendingSignals TakeSignals();

// External mode: connects to the socket path each time. Pre-registered mode:
// hands out the inherited fd once.
std::unique_ptr<Connector> UnixConnector(const std::string& path);
std::unique_ptr<Connector> InheritedConnector(int fd);

// stderr (unless it is /dev/null) and the config's log-file, through a
// LogQueue each (log_queue.h): Say and LogLine never block. Between HoldLogLines
// and ReleaseLogLines (a batch of calls, serve.h), lines about containers
// wait for the fate of the replies: a reply not written, or written past the
// runtime's deadline, turns its `set ...` line into an `unapplied` one
// (NotAppliedLine) plus a line on stderr.
class StderrOutput : public Output {
 public:
  StderrOutput();
  // With a writer of the test's own, and whether stderr counts as quiet.
  StderrOutput(std::unique_ptr<LineWriter> err_writer, std::unique_ptr<LineWriter> file_writer,
               bool quiet);
  void Say(const std::string& msg) override;
  void LogLine(const Config& cfg, const std::string& line) override;
  void HoldLogLines();
  void ReleaseLogLines(const ReplyFate& fate);
  // Both queues drained, up to timeout_ms each (tests).
  bool Drain(int timeout_ms) { return err_.Drain(timeout_ms) && files_.Drain(timeout_ms); }

 private:
  void Emit(const std::string& file, const std::string& line);
  bool quiet_;  // stderr is /dev/null or closed
  // One writer thread each: a stderr nobody reads must not hold up the
  // log-file, nor the other way round.
  LogQueue err_;
  LogQueue files_;
  bool holding_ = false;
  std::vector<std::pair<std::string, std::string>> held_;  // log-file, line
};

}  // namespace ocirlimit::nri
