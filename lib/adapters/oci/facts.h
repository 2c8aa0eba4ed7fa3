// The container facts the core decides on, read from an OCI spec: a
// bundle's config.json, podman's precreate spec, or an exec --process file's
// process object (which has only env).
#pragma once

#include <string>
#include <string_view>

#include "adapters/oci/spec.h"
#include "core/policy.h"
#include "formats/error.h"

namespace ocirlimit {

// Reads annotations, process.env, linux.devices and process.rlimits from a
// spec (config.json or podman's precreate spec); a field of the wrong type
// is an error.
Result<ContainerFacts> FactsFromSpec(const Json& spec);

// FactsFromSpec of a spec's text, building only the members it reads
// (json_members.h): audit reads a bundle's config.json per container.
// `what` names the text in errors.
Result<ContainerFacts> FactsFromSpecText(std::string_view text, const std::string& what);

// FactsFromSpec, then Decide.
Result<Decision> DecideForSpec(const Config& cfg, const Json& spec, const std::string& where);

// Decide for a spec given as text (a bundle's config.json, or an exec
// --process file's process object, which has only env); `where` names it.
Result<Decision> DecideForSpecText(const Config& cfg, std::string_view text,
                                   const std::string& where);

}  // namespace ocirlimit
