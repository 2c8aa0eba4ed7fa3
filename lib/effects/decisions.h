// Where the decision records (formats/decision.h) live: one file per
// container, DIR/<id>, in a root-owned 0700 directory on /run (a tmpfs, so
// records end with the containers at reboot). Written whole (temp file and
// rename) by the root program that decided; read back only through
// FsOps::ReadTrusted with root as the one owner, so neither a pod nor a
// local user can put a record there (docs/policy.md, "One decision per
// container").
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "effects/fs_ops.h"
#include "formats/decision.h"
#include "formats/error.h"

namespace ocirlimit {

inline constexpr std::string_view kDecisionsDir = "/run/oci-rlimit/decisions";
// Another directory, for tests and nodes whose /run differs; set by the
// engine's or the admin's environment, never a pod's.
inline constexpr std::string_view kDecisionsDirEnv = "OCI_RLIMIT_DECISIONS_DIR";
// A record is a few lines; anything larger is not ours.
inline constexpr size_t kMaxDecisionBytes = 4096;

class DecisionStore {
 public:
  virtual ~DecisionStore() = default;
  // The record of `id`; nullopt when there is none. An error when one is
  // there but is not root's whole (an owner, a mode, a symlink) or does not
  // parse: never believed, and the caller says so.
  virtual Result<std::optional<DecisionRecord>> Read(const std::string& id) = 0;
  // Replaces the record of d.id, making the directory when missing.
  virtual Status Write(const DecisionRecord& d) = 0;
  // No record afterwards (none before is fine).
  virtual Status Remove(const std::string& id) = 0;
  // The ids that have a record (temp files left out).
  virtual Result<std::vector<std::string>> Ids() = 0;
  virtual const std::string& dir() const = 0;
};

// A record younger than this is never pruned: a create in flight writes
// its record before the runtime's state, or the engine's list, has it.
inline constexpr std::time_t kPruneGrace = 600;  // seconds

// "2026-12-07T21:25:15Z" (what Rfc3339Now writes) as seconds since the
// epoch; nullopt for any other text.
[[nodiscard]] std::optional<std::time_t> ParseRfc3339Utc(const std::string& text);

// Whether `d` was written kPruneGrace or more before `now` (a time that does
// not parse is never old enough).
[[nodiscard]] bool OldEnoughToPrune(const DecisionRecord& d, std::time_t now);

// ReadTrusted(dir, {id}, root) and ParseDecision; a record naming another
// id is an error. ENOENT (no record, no directory) is nullopt.
[[nodiscard]] Result<std::optional<DecisionRecord>> ReadDecision(FsOps& fs, const std::string& dir,
                                                                 const std::string& id);

// $OCI_RLIMIT_DECISIONS_DIR when set and absolute, else kDecisionsDir.
[[nodiscard]] std::string DecisionsDir(const std::optional<std::string>& env);

// The real store: reads through `fs`, writes with PlaceNewFile or AtomicWriteFileMode (0600)
// in `dir`, made 0700 when missing and refused when it is a symlink, not
// root's or writable by group or others.
[[nodiscard]] std::unique_ptr<DecisionStore> LinuxDecisionStore(FsOps& fs, std::string dir);

}  // namespace ocirlimit
