// What the CRI suites read from inside a container: a pod whose container's
// init prints /proc/self/limits to its log, and an ExecSync of
// `cat /proc/self/limits`. Shared by cri_test, cri_installer_test, nri_test
// and trust_test; failures are reported through gtest, here.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "cri_containerd.h"
#include "harness.h"

namespace ocirlimit::itest::cri {

// The init of every probe container: prints its limits, then stays up for exec.
inline const std::vector<std::string> kInitPrintsLimits = {
    "/bin/sh", "-c", "while read -r l; do echo \"$l\"; done < /proc/self/limits; exec sleep 3600"};

// A probe container that ran, or why it did not.
struct Probe {
  std::string id;             // empty when the pod or the container failed
  std::string error;          // CreateContainer/StartContainer's error, unescaped
  std::optional<Limit> init;  // init's memlock row
};

// Runs pod `spec`, then `c` (its argv should print the limits, as
// kInitPrintsLimits does) in it, and reads init's memlock from the log. A
// failed sandbox is a test failure; a failed container is returned in
// `error` (some tests expect one) and must not have run.
inline Probe RunProbe(CriContainerd& containerd, const PodSpec& spec, const ContainerSpec& c) {
  Probe probe;
  auto pod = containerd.RunPod(spec);
  EXPECT_TRUE(pod) << "the sandbox must start: " << pod.error().Text() << "\n" << containerd.Log();
  if (!pod) return probe;
  auto id = containerd.RunContainer(*pod, c);
  if (!id) {
    probe.error = Unescaped(id.error().Text());
    EXPECT_EQ(containerd.ContainerLog(*pod, c).find(kMemlock), std::string::npos)
        << "a container whose creation failed must not have run";
    return probe;
  }
  probe.id = *id;
  auto log = containerd.WaitForLog(*pod, c, kMemlock);
  EXPECT_TRUE(log) << log.error().Text();
  if (log) probe.init = LimitRow(*log, kMemlock);
  return probe;
}

// A probe container with kInitPrintsLimits in pod `spec`; both must start.
// Returns the container id ("" on a failure, reported through gtest) and
// init's memlock in `init`.
inline std::string RunPrintingPod(CriContainerd& containerd, const PodSpec& spec,
                                  std::optional<Limit>* init) {
  Probe probe =
      RunProbe(containerd, spec, CriContainerd::NewContainer("limits", kInitPrintsLimits));
  EXPECT_TRUE(probe.error.empty()) << probe.error;
  *init = probe.init;
  return probe.id;
}

// The memlock row `cat /proc/self/limits` reads when run by ExecSync in `id`.
inline std::optional<Limit> ExecMemlock(CriContainerd& containerd, const std::string& id) {
  auto r = containerd.cri().ExecSync(id, kCatLimits);
  EXPECT_TRUE(r) << r.error().Text();
  if (!r) return std::nullopt;
  EXPECT_EQ(r->exit_code, 0) << r->err;
  return LimitRow(r->out, kMemlock);
}

}  // namespace ocirlimit::itest::cri
