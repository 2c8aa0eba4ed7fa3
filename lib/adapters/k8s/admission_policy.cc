#include "adapters/k8s/admission_policy.h"

#include <algorithm>
#include <cctype>

#include "adapters/k8s/cel_rlimits.h"
#include "adapters/k8s/policy_checks.h"
#include "adapters/k8s/policy_stale.h"
#include "adapters/k8s/verdict_checks.h"
#include "core/policy.h"
#include "core/policy_digest.h"
#include "core/requests.h"
#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

bool Has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool HasSource(const Config& cfg, RequestSource s) {
  const auto& v = cfg.requests.sources;
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A DNS subdomain, with room for "-warn".
bool PolicyName(std::string_view n) {
  if (n.empty() || n.size() > 240) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(n.front()) && alnum(n.back()) &&
         std::all_of(n.begin(), n.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// Every line of `text` as a YAML comment.
std::string Comment(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    out += line.empty() ? "#\n" : Cat("# ", line, "\n");
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// `key: |-` and the text at `indent` spaces (one line: CEL ignores newlines).
std::string Block(std::string_view key, std::string_view text, size_t indent) {
  const std::string pad(indent, ' ');
  return Cat(key, ": |-\n", pad, "  ", text, "\n");
}

std::string List(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += Cat(out.empty() ? "" : ", ", i);
  return "[" + out + "]";
}

// Pods on CREATE and on an UPDATE that changes the annotation (a recreated
// sandbox reads the new value), an ephemeral container's UPDATE, and the
// pod templates of the workloads. The scale subresource is not matched: a
// Scale carries no template, and the pods a scale-up makes are judged on
// CREATE.
constexpr std::string_view kMatch = R"(  failurePolicy: Ignore
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["pods"]
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["UPDATE"]
      resources: ["pods/ephemeralcontainers"]
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments", "statefulsets", "daemonsets", "replicasets"]
    - apiGroups: ["batch"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["jobs", "cronjobs"]
)";

// The annotation's value in `x` ('' for none), and `x`'s pod template.
std::string AnnotationOf(std::string_view x) {
  const std::string key = CelString(kRequestAnnotation);
  return Cat("(has(", x, ".metadata.annotations) && ", key, " in ", x, ".metadata.annotations ? ",
             x, ".metadata.annotations[", key, "] : '')");
}

std::string TemplateOf(std::string_view x) {
  return Cat("(", x, ".kind == 'CronJob' ? ", x, ".spec.jobTemplate.spec.template : ", x,
             ".spec.template)");
}

// A deletion is never held (a finalizer's removal from an object being
// deleted), and an UPDATE is judged only where it changes what the nodes
// judge: a Pod's annotation, a workload's pod template (not its replicas,
// labels or finalizers).
std::string MatchConditions() {
  return Cat(
      "  matchConditions:\n  - name: not-being-deleted\n    expression: "
      "'!has(object.metadata.deletionTimestamp)'\n"
      "  - name: changes-what-the-nodes-judge\n    ",
      Block("expression",
            Cat("request.operation != 'UPDATE' || request.subResource != '' || "
                "(object.kind == 'Pod' ? ",
                AnnotationOf("object"), " != ", AnnotationOf("oldObject"), " : ",
                TemplateOf("object"), " != ", TemplateOf("oldObject"), ")"),
            4));
}

// Every document's metadata: its name and labels (annotations go here too).
// A policy also carries the digest of the config it was made from (--check).
std::string Metadata(const std::string& name, const std::string& digest = "") {
  std::string out = Cat("metadata:\n  name: ", name,
                        "\n  labels:\n    app.kubernetes.io/managed-by: oci-rlimit\n");
  if (!digest.empty())
    out += Cat("  annotations:\n    ", kPolicyDigestAnnotation, ": \"", digest, "\"\n");
  return out;
}

// A policy with nothing to judge under this config passes every object: it
// is written all the same, so that applying this file replaces what an
// older config bound under that name.
constexpr std::string_view kInert = R"(  validations:
  # nothing: the nodes never do this under this config
  - expression: "true"
)";

// Whether CEL `text` reads variables.NAME.
bool Reads(std::string_view text, std::string_view name) {
  const std::string ref = Cat("variables.", name);
  for (size_t at = text.find(ref); at != std::string_view::npos; at = text.find(ref, at + 1)) {
    const size_t end = at + ref.size();
    if (end == text.size() ||
        (std::isalnum(static_cast<unsigned char>(text[end])) == 0 && text[end] != '_')) {
      return true;
    }
  }
  return false;
}

// The variables `checks` read, directly or through another (each reads only
// earlier ones): the API server's type check compiles every variable again
// for each expression and kind, so a policy carries none it does not read.
std::vector<Variable> ReadBy(const std::vector<Variable>& all, const std::vector<Check>& checks) {
  std::string read;
  for (const Check& c : checks) read += Cat(c.expression, "\n", c.message_expression, "\n");
  std::vector<bool> keep(all.size());
  for (size_t i = all.size(); i-- > 0;) {
    keep[i] = Reads(read, all[i].name);
    if (keep[i]) read += all[i].expression + "\n";
  }
  std::vector<Variable> out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (keep[i]) out.push_back(all[i]);
  }
  return out;
}

std::string PolicyDoc(const std::string& name, const std::string& digest,
                      const std::vector<Variable>& all, const std::vector<Check>& checks) {
  const std::vector<Variable> variables = ReadBy(all, checks);
  std::string out =
      Cat("apiVersion: admissionregistration.k8s.io/v1\n", "kind: ValidatingAdmissionPolicy\n",
          Metadata(name, digest), "spec:\n", kMatch);
  if (checks.empty()) return out + std::string(kInert);
  out += MatchConditions() + "  variables:\n";
  for (const Variable& v : variables) {
    out += Cat("  - name: ", v.name, "\n    ", Block("expression", v.expression, 4));
  }
  out += "  validations:\n";
  for (const Check& c : checks) {
    out += Cat("  # ", c.what, "\n  - ", Block("expression", c.expression, 4));
    out += Cat("    message: ", JsonQuote(c.message), "\n    ",
               Block("messageExpression", c.message_expression, 4));
  }
  return out;
}

std::string BindingDoc(const std::string& name, const std::vector<std::string>& actions,
                       const PolicyOptions& o) {
  std::string out = Cat("apiVersion: admissionregistration.k8s.io/v1\n",
                        "kind: ValidatingAdmissionPolicyBinding\n", Metadata(name), "spec:\n",
                        "  policyName: ", name, "\n  validationActions: ", List(actions), "\n");
  if (!o.namespace_selector.empty() || !o.object_selector.empty()) {
    out += "  matchResources:\n";
    if (!o.namespace_selector.empty()) {
      out += "    namespaceSelector:\n" + SelectorYaml(o.namespace_selector, 6);
    }
    if (!o.object_selector.empty()) {
      out += "    objectSelector:\n" + SelectorYaml(o.object_selector, 6);
    }
  }
  return out;
}

// What the YAML's reader must know before the documents.
std::string Intro(const Config& cfg, const PolicyOptions& o) {
  return Cat(
      "Generated by `oci-rlimit admission-policy` from ", o.config_origin, "\n(over-ceiling = \"",
      cfg.requests.over_ceiling == OverCeiling::kReject ? "reject" : "clamp", "\", on-error = \"",
      cfg.on_error == OnError::kFail ? "fail" : "warn",
      "\"): the ceilings of [requests] at the door (docs/policy.md, \"At admission\").\n"
      "The nodes stay the authority. A pod they refuse is refused here (",
      o.name,
      ", with the actions\nyou chose) with the node's own message; one they start with a "
      "warning is only warned about\n(",
      o.name,
      "-warn). Regenerate this whenever the nodes' config changes: both policies and both\n"
      "bindings are always written (one judges nothing where the config gives it nothing), so\n"
      "`kubectl apply -f` of the new file replaces what an older one bound.\n\n",
      "Judged here: the pod annotation ", kRequestAnnotation,
      " (the pod's, so every container gets it; the\nmessage names the first the kubelet "
      "starts) of Pods (CREATE, an UPDATE that changes it, an\nephemeral container) and of the "
      "pod templates of Deployments, StatefulSets, DaemonSets,\nReplicaSets, Jobs and CronJobs "
      "(CREATE, an UPDATE that changes the template)",
      o.ulimits_field ? ";\nsecurityContext.ulimits (KEP-5758), per container" : "",
      ".\nNever held: an object being deleted, an UPDATE that leaves those as they were "
      "(replicas,\nlabels, finalizers), the scale subresource (a Scale has no template; the "
      "pods a scale-up\nmakes are judged on CREATE).\n\n");
}

std::string Header(const Config& cfg, const PolicyOptions& o) {
  std::string text =
      Cat(Intro(cfg, o), "Left to the node, never guessed:\n- an annotation value longer than ",
          std::to_string(kMaxJudgedChars),
          " characters (CEL's cost limits; every value the node\n  accepts without "
          "padding is shorter);\n");
  if (HasSource(cfg, RequestSource::kUlimitAdjuster)) {
    text += Cat("- the NRI sample's ", kUlimitAdjusterKey,
                "NAME annotations (source \"ulimit-adjuster\"):\n  their value is YAML 1.1, which "
                "CEL cannot parse as the node does (libyaml, as the sample);\n");
  }
  if (HasSource(cfg, RequestSource::kSpec)) {
    text +=
        "- process.rlimits entries the runtime writes itself (containerd's nofile default, a "
        "base spec),\n  and under over-ceiling = \"clamp\" the hook's refusal of a spec entry "
        "over its ceiling (runc\n  re-applies it after hooks): here it is only warned "
        "about;\n";
  }
  text +=
      "- pods whose annotations never reach the runtime (a containerd handler without\n"
      "  pod_annotations), and the node's own limits, rules and rootless fitting.\n";
  return Comment(text);
}

Status CheckInput(const Config& cfg, const PolicyOptions& o) {
  if (!cfg.requests.enabled) {
    return MakeError(
        "[requests] enabled is false: the nodes ignore every request, so there is nothing to "
        "refuse at admission");
  }
  if (!HasSource(cfg, RequestSource::kOciRlimit) && !o.ulimits_field) {
    return MakeError(
        "[requests] sources lacks \"oci-rlimit\", and --ulimits-field is not given: no source "
        "the policy can judge");
  }
  if (o.ulimits_field && !HasSource(cfg, RequestSource::kSpec)) {
    return MakeError(
        "--ulimits-field: [requests] sources lacks \"spec\", so the nodes do not judge "
        "securityContext.ulimits; add it or leave the flag out");
  }
  if (!PolicyName(o.name)) {
    return MakeError(Cat("--name ", Quote(o.name),
                         ": want a DNS subdomain (lowercase letters, digits, '-' and '.', at most "
                         "240 characters)"));
  }
  return Ok{};
}

}  // namespace

Result<std::vector<std::string>> ParseActions(std::string_view text) {
  std::vector<std::string> out;
  const std::string_view all = text;
  while (true) {
    const size_t comma = text.find(',');
    const std::string a(Trim(text.substr(0, comma)));
    if (a != "Deny" && a != "Warn" && a != "Audit") {
      return MakeError(Cat("--actions ", Quote(all), ": ", Quote(a),
                           " is not Deny, Warn or Audit (comma-separated)"));
    }
    if (Has(out, a)) return MakeError(Cat("--actions ", Quote(all), ": ", a, " given twice"));
    out.push_back(a);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (Has(out, "Deny") && Has(out, "Warn")) {
    return MakeError(Cat("--actions ", Quote(all),
                         ": Deny and Warn together are refused by the API server (a denied "
                         "request carries the message already)"));
  }
  return out;
}

Result<std::string> AdmissionPolicyYaml(const Config& cfg, const PolicyOptions& o) {
  if (auto st = CheckInput(cfg, o); !st) return st.error();
  const Judged j{HasSource(cfg, RequestSource::kOciRlimit), o.ulimits_field};
  const std::string warn_name = o.name + "-warn";
  std::vector<Variable> vars = TemplateVariables(cfg);
  if (j.annotation) {
    for (auto& v : AnnotationVariables(cfg)) vars.push_back(std::move(v));
  }
  if (j.ulimits) {
    for (auto& v : UlimitsVariables(cfg)) vars.push_back(std::move(v));
  }
  for (auto& v : VerdictVariables(cfg, j, warn_name)) vars.push_back(std::move(v));
  std::vector<std::string> warn_actions = {"Warn"};
  if (Has(o.actions, "Audit")) warn_actions.emplace_back("Audit");
  return Cat(Header(cfg, o), "---\n",
             PolicyDoc(o.name, PolicyDigest(cfg), vars, RefusedChecks(cfg)), "---\n",
             BindingDoc(o.name, o.actions, o), "---\n",
             PolicyDoc(warn_name, PolicyDigest(cfg), vars, WarnedChecks(cfg)), "---\n",
             BindingDoc(warn_name, warn_actions, o));
}

}  // namespace ocirlimit::k8s
