// One NRI connection, pure: bytes in, bytes out. It registers the plugin on
// connection 2, answers the runtime's unary calls on connection 1 through a
// PluginService, and says when to disconnect. The socket loop (serve.h)
// feeds it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/error.h"
#include "nri/wire.h"

namespace ocirlimit::nri {

inline constexpr std::string_view kPluginService = "nri.pkg.api.v1alpha1.Plugin";
inline constexpr std::string_view kRuntimeService = "nri.pkg.api.v1alpha1.Runtime";

// An answer to one call; status.code != 0 is an error reply.
struct Reply {
  std::string payload;
  RpcStatus status;
};

// The Plugin service's methods (Configure, Synchronize, CreateContainer, ...).
class PluginService {
 public:
  virtual ~PluginService() = default;
  virtual Reply Call(std::string_view method, std::string_view payload) = 0;
};

class Session {
 public:
  // register_payload: an encoded RegisterPluginRequest.
  Session(PluginService& service, std::string register_payload)
      : service_(service), register_payload_(std::move(register_payload)) {}

  // The bytes to send on connect: RegisterPlugin on connection 2.
  [[nodiscard]] std::string Start();
  // Feeds bytes read from the socket and appends what to send to `out`. An
  // error means the peer broke the protocol (or refused us): disconnect.
  [[nodiscard]] Status OnBytes(std::string_view in, std::string& out);
  // Why the connection ended at EOF, as one line.
  [[nodiscard]] std::string EofReason() const;
  [[nodiscard]] bool registered() const { return registered_; }
  // Calls answered so far (for tests and the log).
  [[nodiscard]] uint64_t calls() const { return calls_; }

  // The calls the last OnBytes answered: how many, and the tightest deadline
  // the runtime gave them (ttrpc's timeout_nano, which containerd sets from
  // its request timeout: Configure's request_timeout_ms, 2 s by default); 0
  // when none gave one.
  struct Batch {
    int answered = 0;
    int64_t deadline_ns = 0;
  };
  [[nodiscard]] const Batch& last_batch() const { return batch_; }

 private:
  void Answer(const Message& m, std::string& out);
  Status OnRuntimeMessage(const Message& m);

  PluginService& service_;
  std::string register_payload_;
  Demux demux_;
  uint32_t next_stream_ = 1;  // a client's ids: odd, from 1, up by 2
  uint32_t register_stream_ = 0;
  bool registered_ = false;
  uint64_t calls_ = 0;
  Batch batch_;
};

}  // namespace ocirlimit::nri
