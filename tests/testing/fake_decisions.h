// An in-memory DecisionStore (effects/decisions.h) for the unit tests of the
// programs that write and apply decision records: records by id, a scripted
// error for a read or a write, and every call counted.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "effects/decisions.h"

namespace ocirlimit::testsupport {

class FakeDecisions final : public DecisionStore {
 public:
  Result<std::optional<DecisionRecord>> Read(const std::string& id) override {
    ++reads;
    if (read_error) return *read_error;
    auto it = records.find(id);
    if (it == records.end()) return std::optional<DecisionRecord>{};
    return std::optional<DecisionRecord>(it->second);
  }
  Status Write(const DecisionRecord& d) override {
    if (write_error) return *write_error;
    records[d.id] = d;
    written.push_back(d.id);
    return Ok{};
  }
  Status Remove(const std::string& id) override {
    records.erase(id);
    removed.push_back(id);
    return Ok{};
  }
  Result<std::vector<std::string>> Ids() override {
    if (ids_error) return *ids_error;
    std::vector<std::string> ids;
    for (const auto& [id, d] : records) ids.push_back(id);
    return ids;
  }
  const std::string& dir() const override { return dir_; }

  std::map<std::string, DecisionRecord> records;
  std::optional<Error> read_error;
  std::optional<Error> write_error;
  std::optional<Error> ids_error;  // the directory cannot be listed
  std::vector<std::string> written;
  std::vector<std::string> removed;
  int reads = 0;

 private:
  std::string dir_ = "/run/oci-rlimit/decisions";
};

}  // namespace ocirlimit::testsupport
