#include "adapters/engines/chain.h"

#include <algorithm>

#include "adapters/engines/constants.h"
#include "adapters/engines/nvidia.h"
#include "formats/text.h"

namespace ocirlimit::engines {
namespace {

std::string Base(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string List(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out.append(out.empty() ? "" : ", ").append(Quote(n));
  return "[" + out + "]";
}

constexpr size_t kMaxSteps = 8;

class Resolver {
 public:
  Resolver(NodeFiles& fs, const WrapperSettings& wrapper, std::string path_list)
      : fs_(fs), wrapper_(wrapper), path_(std::move(path_list)) {}

  Chain Run(const ChainStart& start) {
    auto found = fs_.WhichIn(start.binary, path_);
    if (!found) {
      return Missing(Cat(start.via, " ", Quote(start.binary),
                         start.binary.starts_with("/") ? " does not exist or is not executable"
                                                       : " is not on the PATH (" + path_ + ")"));
    }
    return Follow(start.binary, *found, start.via);
  }

 private:
  Chain Follow(const std::string& name, const std::string& path, const std::string& via) {
    ChainStep step{name, path, fs_.Resolve(path).value_or(path), KindOf(fs_, path), via};
    for (const auto& s : chain_.steps) {
      const bool same_kind = s.kind == step.kind &&
                             (s.kind == ProgramKind::kWrapper || s.kind == ProgramKind::kNvidia);
      if (s.real == step.real || same_kind) {
        chain_.steps.push_back(step);
        return End(ChainEnd::kLoop, Cat("loop: ", Base(step.real), " comes back (", via, ")"));
      }
    }
    chain_.steps.push_back(step);
    if (chain_.steps.size() > kMaxSteps) return End(ChainEnd::kLoop, "more than 8 programs");
    switch (step.kind) {
      case ProgramKind::kLowLevel:
        return End(ChainEnd::kRuntime, "");
      case ProgramKind::kWrapper:
        chain_.wrapper = true;
        return Wrapper(step);
      case ProgramKind::kNvidia:
        chain_.nvidia = true;
        return Nvidia(step);
      case ProgramKind::kOther:
        break;
    }
    return End(ChainEnd::kUnknown, Cat(step.real, " is neither runc, crun, NVIDIA's runtime nor ",
                                       kWrapperName, ": doctor cannot follow it"));
  }

  Chain Wrapper(const ChainStep& self) {
    if (!wrapper_.readable) {
      return End(ChainEnd::kUnknown, "oci-rlimit's config does not parse: " + wrapper_.error);
    }
    const std::string via =
        Cat("[runtime] runtimes ", List(wrapper_.runtimes),
            wrapper_.source.empty() ? std::string(" (the default)") : " in " + wrapper_.source);
    for (const auto& r : wrapper_.runtimes) {
      auto found = fs_.WhichIn(r, path_);
      if (!found) continue;
      if (fs_.Resolve(*found).value_or(*found) == self.real) {
        chain_.notes.push_back(Cat(Quote(r), " on the PATH is ", *found, ", which is ",
                                   kWrapperName, " itself: it skips it"));
        continue;
      }
      return Follow(r, *found, via);
    }
    return Missing(Cat(via, ": none resolves on the PATH (", path_, ") to a runtime other than ",
                       kWrapperName, " itself"));
  }

  Chain Nvidia(const ChainStep& self) {
    auto cfg = ReadNvidiaConfig(fs_, self.path);
    if (!cfg) return End(ChainEnd::kUnknown, cfg.error().Text());
    const std::string via =
        Cat("NVIDIA's runtimes ", List(cfg->runtimes),
            cfg->runtimes_set ? " in " + cfg->source
                              : Cat(" (its default; ", NvidiaConfigPathFor(self.path),
                                    cfg->source.empty() ? " does not exist)" : " sets none)"));
    for (const auto& r : cfg->runtimes) {
      if (auto found = fs_.WhichIn(r, path_)) return Follow(r, *found, via);
    }
    return Missing(Cat(via, ": none resolves on the PATH (", path_, ")"));
  }

  Chain Missing(std::string problem) { return End(ChainEnd::kMissing, std::move(problem)); }

  Chain End(ChainEnd end, std::string problem) {
    chain_.end = end;
    chain_.problem = std::move(problem);
    return chain_;
  }

  NodeFiles& fs_;
  const WrapperSettings& wrapper_;
  std::string path_;
  Chain chain_;
};

}  // namespace

std::string Chain::Text() const {
  std::string out;
  for (const auto& s : steps) out.append(out.empty() ? "" : " -> ").append(s.path);
  return out;
}

ProgramKind KindOf(NodeFiles& fs, const std::string& node_path) {
  const std::string base = Base(fs.Resolve(node_path).value_or(node_path));
  if (base == kWrapperName) return ProgramKind::kWrapper;
  if (IsNvidiaRuntimeName(base)) return ProgramKind::kNvidia;
  if (std::find(kLowLevelRuntimes.begin(), kLowLevelRuntimes.end(), base) !=
      kLowLevelRuntimes.end()) {
    return ProgramKind::kLowLevel;
  }
  return ProgramKind::kOther;
}

Chain ResolveChain(NodeFiles& fs, const ChainStart& start, const WrapperSettings& wrapper) {
  return Resolver(fs, wrapper, start.path_list).Run(start);
}

}  // namespace ocirlimit::engines
