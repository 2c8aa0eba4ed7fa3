// Our installer as lifecycle operations (docs/daemons-testing.md, "The
// lifecycle test"): install (a rerun when installed), uninstall (refused with
// exit 3 while handler pods run, nothing removed), and install.sh SIGKILLed
// mid-run and rerun. After every step, two more invariants:
//  - doctor's ok and FAIL agree with the engine: not clean while the engine
//    serves a handler other than the installed one (after an uninstall or an
//    install, until the engine restarts), clean otherwise;
//  - each file a fresh install writes is on the node with the bytes it wrote
//    then, or absent (all present when installed, none when uninstalled),
//    and no temp file of ours is left (a killed run's may stay outside
//    the engines' watched `.d` directories until the next run).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cri_client.h"
#include "harness.h"
#include "lifecycle_model.h"

namespace ocirlimit::itest::lifecycle {

struct Fixed;
class LifecycleNode;

// What a node that runs our installer offers the lifecycle test.
class NodeInstaller {
 public:
  virtual ~NodeInstaller();
  // install.sh with the node's install arguments; --uninstall.
  virtual CmdResult Install() = 0;
  virtual CmdResult Uninstall() = 0;
  // install.sh started, then SIGKILLed with every process it started (its
  // process group) after `delay`; true when it was still running then.
  virtual bool InstallKilledAfter(std::chrono::milliseconds delay) = 0;
  // `oci-rlimit doctor --json` on the node: "STATUS AREA: WHAT" per check.
  virtual std::vector<std::string> Doctor() = 0;
  // `path` on the node as the test reads it.
  virtual std::string Host(const std::string& path) const = 0;
  // The engine, as its name appears in the installer's lines ("crio").
  virtual std::string Engine() const = 0;
};

// The files a fresh install wrote, read once after it: every "created"
// path of its manifest, and the record's manifest and mode.json.
class FreshInstall {
 public:
  // An error text, or nullopt.
  std::optional<std::string> Read(const NodeInstaller& node);
  // Each file whole or absent: every one present (`installed`), none
  // present (not), or either (`any`, right after a SIGKILL, when the
  // manifest may hold the first lines of a fresh one's). An error text
  // naming the first file that is neither, or nullopt.
  enum class Expect { kInstalled, kUninstalled, kAny };
  std::optional<std::string> Check(const NodeInstaller& node, Expect expect) const;

 private:
  // Whether `host` (node path `path`) holds the fresh bytes; a file already
  // found whole is read again only once its inode, size or mtime changed.
  bool Whole(const std::string& path, const std::string& host) const;

  std::map<std::string, size_t> files_;                  // node path -> hash of its fresh bytes
  std::string manifest_;                                 // a killed run's is a prefix of it
  mutable std::map<std::string, std::string> verified_;  // node path -> stat identity
};

// Runs an installer op on `node` against the state `model` holds before
// it (refused or not); an error text, or nullopt.
std::optional<std::string> RunInstallerOp(NodeInstaller& node, const FreshInstall& fresh,
                                          const Model& model, const Op& op);
// The installer's invariants in the state `model` holds now.
std::optional<std::string> CheckInstaller(NodeInstaller& node, const FreshInstall& fresh,
                                          const Model& model);

// A handler pod while the engine does not serve the installed handler:
// RunPodSandbox or CreateContainer must fail, and what it made is removed.
std::optional<std::string> ExpectHandlerRefused(LifecycleNode& node, const cri::PodSpec& spec);

// Runs `argv` in a process group of its own and SIGKILLs the group after
// `delay`; true when it was still running then.
bool RunKilledAfter(const std::vector<std::string>& argv, std::chrono::milliseconds delay);
// doctor --json's output as "STATUS AREA: WHAT" lines; one "FAIL doctor: ..."
// line when it printed no JSON.
std::vector<std::string> DoctorChecks(const CmdResult& r);

// The fixed sequences of the installer's ops (issue 44's breaks 3 and 4).
std::vector<Fixed> InstallerSequences();

}  // namespace ocirlimit::itest::lifecycle
