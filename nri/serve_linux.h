// The real socket, signals and output for oci-rlimit-nri (serve.h's
// interfaces over poll(2), a self-pipe and O_APPEND log lines).
#pragma once

#include <memory>
#include <optional>
#include <string>

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

// stderr (unless it is /dev/null) and the config's log-file.
class StderrOutput : public Output {
 public:
  StderrOutput();
  void Say(const std::string& msg) override;
  void LogLine(const Config& cfg, const std::string& line) override;

 private:
  void Write(const std::string& text);
  bool quiet_;  // stderr is /dev/null or closed
};

}  // namespace ocirlimit::nri
