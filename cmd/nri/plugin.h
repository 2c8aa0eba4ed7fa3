// oci-rlimit's NRI Plugin service: Configure subscribes to CreateContainer
// only, Synchronize hands the running containers to the Healer (nri/heal.h)
// and is answered with no updates, CreateContainer gets the verdict's
// rlimits as its adjustment, anything else is Unimplemented. Pure: time,
// output and the host come in through small interfaces.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/config.h"
#include "effects/runtime_peer.h"
#include "formats/log_line.h"
#include "nri/session.h"

namespace ocirlimit::nri {

class Healer;
class NriMetrics;

// Event mask bit (event - 1); CREATE_CONTAINER is event 4.
inline constexpr int32_t kEventMaskCreateContainer = 1 << 3;

// The log line (formats/log_line.h, as every program writes it):
// `TIME id="ID" via="nri" set memlock=unreported->8388608:8388608`. The
// "before" of a limit is kBeforeUnreported when the CreateContainer request
// does not carry its type in Container.rlimits: the container would have had
// the spec's own entry, if it has one the runtime did not report, else the
// limit the runtime inherits (docs/nri.md).
inline constexpr std::string_view kLogVia = "nri";

class Output {
 public:
  virtual ~Output() = default;
  // A message about the plugin itself ("oci-rlimit-nri: ..." on stderr).
  virtual void Say(const std::string& msg) = 0;
  // One log line about a container: cfg.log_file, and stderr.
  virtual void LogLine(const Config& cfg, const std::string& line) = 0;
};

class NriPlugin : public PluginService {
 public:
  // config: the config in force at each call (SIGHUP replaces it); now: RFC
  // 3339 time; healer and metrics: outlive every connection's plugin
  // (nullptr: no heal, no counts).
  NriPlugin(std::function<const Config&()> config, Output& out, std::function<std::string()> now,
            Healer* healer = nullptr, NriMetrics* metrics = nullptr)
      : config_(std::move(config)),
        out_(out),
        now_(std::move(now)),
        healer_(healer),
        metrics_(metrics) {}
  Reply Call(std::string_view method, std::string_view payload) override;
  [[nodiscard]] bool configured() const { return configured_; }
  // The runtime at the other end (effects/runtime_peer.h): a limit it cannot
  // raise gets the one unraisable-limit message in the container's log line.
  void SetRuntime(std::optional<RuntimeLimits> runtime) { runtime_ = std::move(runtime); }

  // RegisterPluginRequest {plugin_name, plugin_idx}, encoded.
  [[nodiscard]] static std::string RegisterPayload(const std::string& name,
                                                   const std::string& index);

 private:
  Reply Configure(std::string_view payload);
  Reply Synchronize(std::string_view payload);
  Reply CreateContainer(std::string_view payload);
  // A log record about container `id`, now, via kLogVia.
  [[nodiscard]] LogRecord Record(const std::string& id) const;

  std::function<const Config&()> config_;
  Output& out_;
  std::function<std::string()> now_;
  Healer* healer_;
  NriMetrics* metrics_;
  bool configured_ = false;
  std::optional<RuntimeLimits> runtime_;
};

}  // namespace ocirlimit::nri
