// Random values of the ulimit-adjuster annotation, from one seed: flow and
// block lists, block lists of flow maps, YAML 1.1 number forms, quoting,
// tags, case and spelling of keys and types, spacing, tabs, comments, line
// ends, markers and directives, missing, doubled and unknown keys.
#pragma once

#include <cstdint>
#include <string>

namespace ocirlimit::peers {

std::string RandomUlimitYaml(uint64_t seed);

// A value as one line of tests/peers/ulimit_corpus.txt, and back.
std::string CorpusLine(const std::string& value);
bool FromCorpusLine(const std::string& line, std::string& value);

}  // namespace ocirlimit::peers
