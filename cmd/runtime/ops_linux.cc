#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "effects/config_loader.h"
#include "effects/decisions.h"
#include "effects/exec.h"
#include "effects/files.h"
#include "effects/process_ops.h"
#include "formats/text.h"
#include "runtime/ops.h"

namespace ocirlimit {
namespace {

class LinuxOps final : public RuntimeOps {
 public:
  Result<LoadedConfig> LoadConfig(const std::optional<std::string>& flag) override {
    return LoadConfigAs(flag, ProcessEnv(), !InInitialUserNamespace());
  }

  bool InInitialUserNamespace() override { return ThisProcessInInitialUserNamespace(); }

  DecisionStore* Decisions() override {
    if (geteuid() != 0 || !InInitialUserNamespace()) return nullptr;
    static const std::unique_ptr<DecisionStore> store =
        LinuxDecisionStore(LinuxFsOps(), DecisionsDir(Getenv(kDecisionsDirEnv)));
    return store.get();
  }
  bool HasSysResource() override { return LinuxProcessOps().HasSysResource(); }

  Result<Rlimit> OwnLimit(int resource) override {
    struct rlimit now {};
    if (getrlimit(static_cast<__rlimit_resource>(resource), &now) != 0) {
      return MakeError("getrlimit", errno);
    }
    return Rlimit{resource, now.rlim_cur, now.rlim_max};
  }

  std::optional<std::string> Getenv(std::string_view name) override {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }

  void Setenv(std::string_view name, const std::string& value) override {
    setenv(std::string(name).c_str(), value.c_str(), 1);
  }

  std::optional<FileId> Probe(const std::string& path) override {
    auto id = StatFollow(path);
    if (!id || !S_ISREG(id->mode)) return std::nullopt;
    if (access(path.c_str(), X_OK) != 0) return std::nullopt;
    return *id;
  }

  Result<FileId> Self() override { return StatFollow("/proc/self/exe"); }

  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return ReadFileBounded(path, max_bytes);
  }

  Status ReplaceFile(const std::string& path, const std::string& content) override {
    return AtomicWriteFile(path, content);
  }

  Status AppendLine(const std::string& path, const std::string& line) override {
    return ocirlimit::AppendLine(path, line);
  }

  std::string Now() override { return Rfc3339Now(); }

  // Nowhere is left to report a failed write to stderr.
  void Stderr(const std::string& line) override { (void)WriteAll(STDERR_FILENO, line + "\n"); }

  Result<std::string> RunCaptured(const std::vector<std::string>& argv, int timeout_ms,
                                  size_t max_bytes) override {
    return ocirlimit::RunCaptured(argv, timeout_ms, max_bytes);
  }

  void Stdout(const std::string& text) override {
    if (auto written = WriteAll(STDOUT_FILENO, text); !written) {
      Stderr("oci-rlimit-runtime: write to stdout: " + written.error().Text());
    }
  }

  Error Exec(const std::string& path, const std::vector<std::string>& argv) override {
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(path.c_str(), cargv.data());
    return MakeError("exec " + Quote(path), errno);
  }
};

}  // namespace

RuntimeOps& LinuxRuntimeOps() {
  static LinuxOps ops;
  return ops;
}

}  // namespace ocirlimit
