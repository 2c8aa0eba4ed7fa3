// What oci-rlimit-nri tells doctor about its connection and its heals: a
// small key=value file it replaces atomically at every (re)connect and after
// every Synchronize (default kNriStatusPath). Pure: text in, text out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/argv.h"
#include "formats/error.h"

namespace ocirlimit {

inline constexpr std::string_view kNriStatusPath = "/run/oci-rlimit/nri.status";

// oci-rlimit-nri's flags: its argv (nri/args.cc) and doctor, which reads a
// running plugin's --socket and --status-file from /proc/PID/cmdline, read
// them with this one table.
inline constexpr FlagSpec kNriFlags[] = {
    {.name = "--help", .short_name = "-h"},       {.name = "--version"},
    {.name = "--config", .metavar = "PATH"},      {.name = "--socket", .metavar = "PATH"},
    {.name = "--name", .metavar = "NAME"},        {.name = "--index", .metavar = "NN"},
    {.name = "--status-file", .metavar = "PATH"}, {.name = "--metrics-address", .metavar = "ADDR"},
    {.name = "--node-name", .metavar = "NAME"},
};

struct NriStatus {
  std::string connected;      // RFC 3339: when the runtime last configured the plugin
  std::string synchronized;   // RFC 3339: when that connection's Synchronize was healed; "" not yet
  uint64_t containers = 0;    // containers the runtime listed at that Synchronize
  uint64_t healed = 0;        // of them, healed then
  uint64_t unhealed = 0;      // of them, needing a heal the plugin could not make (reported)
  uint64_t healed_total = 0;  // since the plugin started
  bool report_only = false;   // it cannot read or set other processes' limits
  // Of them, running though the policy refuses them (a rejected request;
  // created while no plugin was connected): healed or not, they need the admin.
  uint64_t refused = 0;
  // Who wrote it: the plugin's PID and start time (clock ticks after boot,
  // /proc/PID/stat field 22). doctor believes the file only while that
  // process runs; 0 when not recorded (an older plugin's file).
  uint64_t writer_pid = 0;
  uint64_t writer_start = 0;
};

// "connected=...\nsynchronized=...\n...", one key per line, after a comment line.
std::string FormatNriStatus(const NriStatus& s);
// Unknown keys are skipped (a newer plugin); a line without '=' or a bad
// number is an error naming the line.
Result<NriStatus> ParseNriStatus(std::string_view text);

}  // namespace ocirlimit
