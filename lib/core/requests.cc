#include "core/requests.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "formats/text.h"
#include "formats/ulimit_yaml.h"

namespace ocirlimit {

const char* RequestSourceName(RequestSource s) {
  switch (s) {
    case RequestSource::kOciRlimit:
      return "oci-rlimit";
    case RequestSource::kUlimitAdjuster:
      return "ulimit-adjuster";
    case RequestSource::kSpec:
      return "spec";
  }
  return "?";
}

std::optional<RequestSource> FindRequestSource(std::string_view name) {
  for (auto s : {RequestSource::kOciRlimit, RequestSource::kUlimitAdjuster, RequestSource::kSpec}) {
    if (name == RequestSourceName(s)) return s;
  }
  return std::nullopt;
}

Status SetRequestSources(const std::vector<std::string>& names, const std::string& at,
                         Requests& req) {
  if (names.empty()) return MakeError(at + ": empty (leave requests off instead)");
  req.sources.clear();
  for (const auto& n : names) {
    auto s = FindRequestSource(n);
    if (!s) {
      return MakeError(at + ": " + Quote(n) +
                       " is not \"oci-rlimit\", \"ulimit-adjuster\" or \"spec\"");
    }
    if (std::find(req.sources.begin(), req.sources.end(), *s) != req.sources.end()) {
      return MakeError(at + ": " + Quote(n) + " given twice");
    }
    req.sources.push_back(*s);
  }
  return Ok{};
}

std::string RequestRecordText(const RequestRecord& r) {
  return Cat(r.source, ": ", r.where, " asks ", FormatRlimit(r.asked), "; ",
             r.granted ? "granted " + FormatRlimit(*r.granted) : std::string("not granted"), " (",
             r.why, ")");
}

namespace {

// What one source asks: where (for messages) and the entries.
struct Asked {
  std::string where;
  std::vector<Rlimit> limits;
};

const std::string* Annotation(const std::map<std::string, std::string>& annotations,
                              const std::string& key) {
  auto it = annotations.find(key);
  return it == annotations.end() ? nullptr : &it->second;
}

const Rlimit* Ceiling(const Requests& req, int resource) {
  for (const auto& c : req.ceilings) {
    if (c.resource == resource) return &c;
  }
  return nullptr;
}

// The spec's entries of ceiling types, the last of each type (runtimes
// apply them in order, so the last sticks).
std::vector<Rlimit> SpecAsks(const Requests& req, const std::vector<Rlimit>& spec) {
  std::vector<Rlimit> out;
  for (const auto& r : spec) {
    if (Ceiling(req, r.resource) == nullptr) continue;
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const Rlimit& o) { return o.resource == r.resource; });
    if (same != out.end()) {
      *same = r;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// The NRI sample reads its key from the pod's annotations only: where those
// are known apart (NRI), a container's own annotation of that key is not its
// request.
void NoteContainerKey(const ContainerFacts& facts, const std::string& key,
                      std::vector<std::string>& notes) {
  const std::string* mine = Annotation(facts.annotations, key);
  const std::string* pods = Annotation(*facts.pod_annotations, key);
  if (mine != nullptr && (pods == nullptr || *pods != *mine)) {
    notes.push_back(Cat("container annotation ", Quote(key),
                        ": ignored, the ulimit-adjuster source reads the pod's annotations only"));
  }
}

// The annotation an annotation source reads, as `annotation "KEY" = "VALUE"`
// and its value; nullopt when the container has none.
std::optional<std::pair<std::string, std::string>> AnnotationOf(const ContainerFacts& facts,
                                                                RequestSource s,
                                                                std::vector<std::string>& notes) {
  std::string key(kRequestAnnotation);
  const std::map<std::string, std::string>* from = &facts.annotations;
  if (s == RequestSource::kUlimitAdjuster) {
    if (!facts.container_name) return std::nullopt;
    key = Cat(kUlimitAdjusterKey, *facts.container_name);
    const std::string old = Cat(kUlimitAdjusterOldKey, *facts.container_name);
    if (facts.pod_annotations) {
      from = &*facts.pod_annotations;
      NoteContainerKey(facts, key, notes);
      NoteContainerKey(facts, old, notes);
    }
    if (Annotation(*from, key) == nullptr) {
      key = old;
    } else if (Annotation(*from, old) != nullptr) {
      notes.push_back(Cat("annotation ", Quote(old), ": ignored, ", Quote(key), " is set too"));
    }
  }
  const std::string* value = Annotation(*from, key);
  if (value == nullptr) return std::nullopt;
  return std::make_pair(Cat("annotation ", Quote(key), " = ", Quote(*value)), *value);
}

Result<std::optional<Asked>> AskAnnotation(const ContainerFacts& facts, RequestSource s,
                                           std::vector<std::string>& notes) {
  auto a = AnnotationOf(facts, s, notes);
  if (!a) return std::optional<Asked>();
  auto asked =
      s == RequestSource::kOciRlimit ? ParseRlimitCsv(a->second) : ParseUlimitYaml(a->second);
  if (!asked) return asked.error().Wrap(a->first);
  return std::optional<Asked>(Asked{a->first, std::move(*asked)});
}

Result<std::optional<Asked>> Ask(const Requests& req, const ContainerFacts& facts, RequestSource s,
                                 std::vector<std::string>& notes) {
  if (s != RequestSource::kSpec) return AskAnnotation(facts, s, notes);
  std::vector<Rlimit> asked = SpecAsks(req, facts.spec_rlimits);
  if (asked.empty()) return std::optional<Asked>();
  return std::optional<Asked>(Asked{"process.rlimits", std::move(asked)});
}

std::string Label(RequestSource s) {
  return s == RequestSource::kOciRlimit ? std::string("request")
                                        : Cat("request (", RequestSourceName(s), ")");
}

// Sets r for its type, replacing what the defaults, a rule or an earlier
// source set; an earlier source's record says it was replaced.
void Grant(Decision& d, const Rlimit& r, RequestSource s) {
  const std::string label = Label(s);
  for (auto& rec : d.requests) {
    if (rec.granted && rec.granted->resource == r.resource && rec.source != RequestSourceName(s)) {
      rec.why += Cat("; replaced by the later source ", RequestSourceName(s));
    }
  }
  for (auto& src : d.sources) {
    if (src.limit.resource == r.resource) {
      src = {r, label};
      return;
    }
  }
  d.sources.push_back({r, label});
}

Status Judge(const Requests& req, RequestSource s, const Asked& a, RequestMode mode, Decision& d) {
  const bool reject = req.over_ceiling == OverCeiling::kReject &&
                      !(s == RequestSource::kSpec && mode == RequestMode::kNodeOnly);
  const std::string refused = " (over-ceiling = \"reject\")";
  for (const auto& r : a.limits) {
    RequestRecord rec{RequestSourceName(s), a.where, r, std::nullopt, ""};
    const Rlimit* c = Ceiling(req, r.resource);
    if (c == nullptr) {
      std::string why = Cat(FormatRlimit(r), ": ", r.info().name, " is not in requests.ceilings");
      if (reject) return MakeError(Cat(a.where, ": ", why, refused));
      d.notes.push_back(Cat(a.where, ": ", why, "; ignored"));
      rec.why = Cat(r.info().name, " is not in requests.ceilings");
      d.requests.push_back(std::move(rec));
      continue;
    }
    Rlimit granted{r.resource, std::min(r.soft, c->soft), std::min(r.hard, c->hard)};
    rec.why = "at or under the ceiling " + FormatRlimit(*c);
    if (granted != r) {
      std::string why = FormatRlimit(r) + " is over the ceiling " + FormatRlimit(*c);
      if (reject) return MakeError(Cat(a.where, ": ", why, refused));
      d.notes.push_back(Cat(a.where, ": ", why, "; clamped to ", FormatRlimit(granted)));
      rec.why = "over the ceiling " + FormatRlimit(*c) + ", clamped";
    }
    rec.granted = granted;
    Grant(d, granted, s);
    d.requests.push_back(std::move(rec));
  }
  return Ok{};
}

}  // namespace

Status ApplyRequests(const Requests& req, const ContainerFacts& facts, RequestMode mode,
                     Decision& d) {
  for (RequestSource s : req.sources) {
    if (mode == RequestMode::kNodeOnly && s != RequestSource::kSpec) continue;
    if (!req.enabled) {
      if (s == RequestSource::kSpec) continue;
      if (auto a = AnnotationOf(facts, s, d.notes)) {
        d.notes.push_back(a->first +
                          ": ignored, requests are not enabled ([requests] enabled = true)");
      }
      continue;
    }
    auto asked = Ask(req, facts, s, d.notes);
    if (!asked) return asked.error();
    if (!*asked) continue;
    if (auto st = Judge(req, s, **asked, mode, d); !st) return st;
  }
  return Ok{};
}

bool HasRequestAnnotation(const ContainerFacts& facts, RequestSource s) {
  std::vector<std::string> notes;
  return s != RequestSource::kSpec && AnnotationOf(facts, s, notes).has_value();
}

std::vector<Rlimit> SpecOverCeiling(const Requests& req, const std::vector<Rlimit>& spec) {
  std::vector<Rlimit> out;
  if (!req.enabled || std::find(req.sources.begin(), req.sources.end(), RequestSource::kSpec) ==
                          req.sources.end()) {
    return out;
  }
  for (const auto& r : SpecAsks(req, spec)) {
    const Rlimit* c = Ceiling(req, r.resource);
    if (r.soft > c->soft || r.hard > c->hard) out.push_back(r);
  }
  return out;
}

}  // namespace ocirlimit
