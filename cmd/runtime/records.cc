#include "runtime/records.h"

#include "formats/text.h"
#include "runtime/decision.h"

namespace ocirlimit {

std::optional<DecisionRecord> ReadRecord(RuntimeOps& ops, const std::string& id,
                                         const WarnFn& warn) {
  DecisionStore* store = ops.Decisions();
  if (store == nullptr) return std::nullopt;
  auto rec = store->Read(id);
  if (!rec) warn(rec.error().Text() + ": deciding from the config");
  return rec ? *rec : std::nullopt;
}

void WriteRecord(RuntimeOps& ops, const std::string& id, const Config& cfg,
                 const std::vector<Rlimit>& limits, const WarnFn& warn) {
  DecisionStore* store = ops.Decisions();
  if (store == nullptr) return;
  if (auto w = store->Write(WrapperDecision(id, cfg, limits, ops.Now())); !w) {
    warn("no decision recorded for " + Quote(id) + ": " + w.error().Text());
  }
}

void RemoveRecord(RuntimeOps& ops, const std::vector<std::string>& args, size_t subcommand_at,
                  const WarnFn& warn) {
  DecisionStore* store = ops.Decisions();
  if (store == nullptr || args.size() <= subcommand_at + 1) return;
  const std::string& id = args.back();
  if (id.starts_with("-")) return;
  if (auto removed = store->Remove(id); !removed) warn(removed.error().Text());
}

}  // namespace ocirlimit
