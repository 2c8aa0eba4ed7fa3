// What the CRI-O suite reads from inside a container: a pod whose
// container's init prints /proc/self/limits to its log, an ExecSync of
// `cat /proc/self/limits`, and the init's limits read through ExecSync.
// Failures are reported through gtest, here.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "crio_fixture.h"
#include "harness.h"

namespace ocirlimit::itest::crio {

inline constexpr const char* kRequestAnnotation = "oci-rlimit.io/rlimits";

// The init of every probe container: prints its limits, then stays up for exec.
inline const std::vector<std::string> kInitPrintsLimits = {
    "/bin/sh", "-c", "while read -r l; do echo \"$l\"; done < /proc/self/limits; exec sleep 3600"};

// A probe container that ran, or why it did not.
struct Probe {
  std::string pod;            // the sandbox id; empty when it failed
  std::string id;             // empty when the pod or the container failed
  std::string error;          // RunPodSandbox's, CreateContainer's or StartContainer's error
  std::optional<Limit> init;  // init's memlock row
};

// Runs pod `spec`, then a kInitPrintsLimits container in it, and reads
// init's memlock from its log. A failed sandbox or container is returned in
// `error` (some tests expect one).
inline Probe RunProbe(CriO& crio, const PodSpec& spec) {
  Probe probe;
  auto pod = crio.RunPod(spec);
  if (!pod) {
    probe.error = Unescaped(pod.error().Text());
    return probe;
  }
  probe.pod = pod->id;
  ContainerSpec c = CriO::NewContainer("limits", kInitPrintsLimits);
  auto id = crio.RunContainer(*pod, c);
  if (!id) {
    probe.error = Unescaped(id.error().Text());
    return probe;
  }
  probe.id = *id;
  auto log = crio.WaitForLog(*pod, c, kMemlock);
  EXPECT_TRUE(log) << log.error().Text();
  if (log) probe.init = LimitRow(*log, kMemlock);
  return probe;
}

// The memlock row `cat /proc/self/limits` reads when run by ExecSync in `id`.
inline std::optional<Limit> ExecMemlock(CriO& crio, const std::string& id) {
  auto r = crio.cri().ExecSync(id, kCatLimits);
  EXPECT_TRUE(r) << r.error().Text();
  if (!r) return std::nullopt;
  EXPECT_EQ(r->exit_code, 0) << r->err;
  return LimitRow(r->out, kMemlock);
}

// The memlock row of the container's init (its PID namespace's 1), read
// through ExecSync; nullopt when the exec failed.
inline std::optional<Limit> InitMemlock(CriO& crio, const std::string& id) {
  auto r = crio.cri().ExecSync(id, {"cat", "/proc/1/limits"});
  if (!r || r->exit_code != 0) return std::nullopt;
  return LimitRow(r->out, kMemlock);
}

}  // namespace ocirlimit::itest::crio
