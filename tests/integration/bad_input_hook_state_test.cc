// The bad-input catalogue (bad_input.h), oci-rlimit-hook: the OCI state on
// stdin (createRuntime) and the spec on stdin (precreate).
#include <gtest/gtest.h>

#include "bad_input.h"

namespace ocirlimit::itest::badinput {
namespace {

// Not JSON, not an object, too big, too deep.
std::vector<Case> StateNotJson() {
  return {
      {"HookStateEmpty",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) { HookState(w, ""); }},
      {"HookStateMalformed",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) { HookState(w, "{id: bad-input}"); }},
      {"HookStateTruncated",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) { HookState(w, R"({"ociVersion":"1.0.2","id":"bad-in)"); }},
      {"HookStateNotObject",
       Prog::kHook,
       1,
       {"state: must be a JSON object"},
       [](World& w) { HookState(w, "[1,2]"); }},
      {"HookStateOver1MiB",
       Prog::kHook,
       1,
       {"input is larger than 1048576 bytes"},
       [](World& w) {
         HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":{"a":")" + Big(1 << 20) + "\"}"));
       }},
      {"HookStateInvalidUtf8",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) {
         HookState(w, R"({"id":"bad-)" + std::string("\xff\xfe") +
                          R"(","status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateDeeplyNested",
       Prog::kHook,
       1,
       {"state: nested deeper than 64 levels"},
       [](World& w) { HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":)" + Deep())); }},
  };
}

// state.pid: missing, the wrong type, out of range, pid 1; a huge value is cut.
std::vector<Case> StatePid() {
  return {
      {"HookStatePidMissing",
       Prog::kHook,
       1,
       {"state.pid: missing"},
       [](World& w) { HookState(w, R"({"id":"x","status":"creating"})"); }},
      {"HookStatePidString",
       Prog::kHook,
       1,
       {"state.pid: \"42\" is not an integer"},
       [](World& w) { HookState(w, w.State("\"42\"")); }},
      {"HookStatePidNegative",
       Prog::kHook,
       1,
       {"state.pid: -7 is not a valid pid"},
       [](World& w) { HookState(w, w.State("-7")); }},
      {"HookStatePidZero",
       Prog::kHook,
       1,
       {"state.pid: 0 is not a valid pid"},
       [](World& w) { HookState(w, w.State("0")); }},
      {"HookStatePidFloat",
       Prog::kHook,
       1,
       {"state.pid: 1.5 is not an integer"},
       [](World& w) { HookState(w, w.State("1.5")); }},
      {"HookStatePidOverflow",
       Prog::kHook,
       1,
       {"state.pid: 4294967297 is not a valid pid"},
       [](World& w) { HookState(w, w.State("4294967297")); }},
      {"HookStatePidOne",
       Prog::kHook,
       1,
       {"pid 1: refusing to touch pid 0 or 1"},
       [](World& w) { HookState(w, w.State("1")); }},
      {"HookStatePidHugeStringIsCut",
       Prog::kHook,
       1,
       {"state.pid: \"4444", "\u2026\" (60000 bytes) is not an integer"},
       [](World& w) { HookState(w, w.State("\"" + std::string(60000, '4') + "\"")); }},
      {"HookStatePidArrayIsNotDumped",
       Prog::kHook,
       1,
       {"state.pid: an array of 20000 elements is not an integer"},
       [](World& w) {
         std::string many = "[";
         for (int i = 0; i < 20000; ++i) many += i ? ",1" : "1";
         HookState(w, w.State(many + "]"));
       }},
  };
}

// state.id, state.annotations, state.bundle, state.status.
std::vector<Case> StateFields() {
  return {
      {"HookStateIdWrongType",
       Prog::kHook,
       1,
       {"state.id: must be a string"},
       [](World& w) {
         HookState(w, R"({"id":7,"status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateAnnotationsWrongType",
       Prog::kHook,
       1,
       {"state.annotations: must be an object"},
       [](World& w) { HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":[])")); }},
      {"HookStateAnnotationValueWrongType",
       Prog::kHook,
       1,
       {"state.annotations[\"k\"]: must be a string"},
       [](World& w) { HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":{"k":1})")); }},
      {"HookStateNulInId",
       Prog::kHook,
       1,
       {"state.id: ", "NUL"},
       [](World& w) {
         HookState(w, R"({"id":"a\u0000b","status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateNewlineInId",
       Prog::kHook,
       1,
       {"state.id: ", "control character"},
       [](World& w) {
         HookState(w, R"({"id":"a\nb","status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateNulInBundle",
       Prog::kHook,
       1,
       {"state.bundle: ", "NUL"},
       [](World& w) {
         HookState(w, R"({"id":"x","status":"creating","pid":)" + w.vars["{pid}"] +
                          R"(,"bundle":")" + w.bundle + R"(\u0000/elsewhere"})");
       }},
      {"HookStateStatusRunning",
       Prog::kHook,
       1,
       {"state.status: \"running\" is too late"},
       [](World& w) {
         HookState(w, R"({"id":"x","status":"running","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateStatusUnknown",
       Prog::kHook,
       1,
       {"state.status: \"paused\" is not a known"},
       [](World& w) {
         HookState(w, R"({"id":"x","status":"paused","pid":)" + w.vars["{pid}"] + "}");
       }},
  };
}

// The target gone, a stage the hook does not run at, the bundle's spec too deep.
std::vector<Case> StateTargetAndBundle() {
  return {
      {"HookStateHugeIdIsCutInTheMessage",
       Prog::kHook,
       1,
       {"container \"aaaa", "\u2026\" (900000 bytes): pid {pid}: no such process"},
       [](World& w) {
         HookState(w, R"({"id":")" + std::string(900000, 'a') + R"(","status":"creating","pid":)" +
                          w.vars["{pid}"] + R"(,"bundle":")" + w.bundle + "\"}");
       }},
      {"HookTargetExitedBeforeApply",
       Prog::kHook,
       1,
       {"container \"bad-input\": pid {pid}: no such process"},
       [](World&) {}},
      {"HookUnknownStage",
       Prog::kHook,
       2,
       {"poststop"},
       [](World& w) {
         w.args = {"--config", w.config, "poststop"};
       }},
      {"HookSpecDeeplyNestedWithRules",
       Prog::kHook,
       1,
       {"{bundle}/config.json: nested deeper than 64 levels"},
       [](World& w) {
         WriteFile(w.config,
                   "[[rule]]\nname = \"all\"\nrlimits = [\"memlock=1M:4M\"]\nmatch = { always "
                   "= true }\n");
         WriteFile(w.bundle + "/config.json", DeepSpec());
         w.stdin_data = w.State(std::to_string(w.Live()));
       }},
      // Without rules the spec is read only for the conflict check, whose
      // failure is a warning: the limits still apply.
      {"HookSpecDeeplyNestedConflictCheckWarns",
       Prog::kHook,
       0,
       {"warning: cannot check the bundle for conflicts: {bundle}/config.json: nested deeper than "
        "64 levels"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json", DeepSpec());
         w.stdin_data = w.State(std::to_string(w.Live()));
       },
       true},
  };
}

// precreate: the spec on stdin, and keys runc's decoder reads another way.
std::vector<Case> PrecreateSpec() {
  return {
      {"HookPrecreateDeeplyNested",
       Prog::kHook,
       1,
       {"precreate spec: nested deeper than 64 levels"},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, DeepSpec());
       }},
      {"HookPrecreateMalformedSpec",
       Prog::kHook,
       1,
       {"precreate spec: not valid JSON"},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, R"({"ociVersion":"1.0.2","process":{)");
       }},
      {"HookPrecreateRlimitsKeyCaseFold",
       Prog::kHook,
       1,
       {"precreate spec: key \"rlimit\xc5\xbf\" in process differs only by case from \"rlimits\""},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, "{\"process\":{\"args\":[\"sh\"],\"rlimit\xc5\xbf\":[]}}");
       }},
      {"HookPrecreateProcessTwice",
       Prog::kHook,
       1,
       {"precreate spec: key \"process\" appears twice in the spec"},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, R"({"process":{"args":["sh"]},"process":{"args":["sh"]}})");
       }},
  };
}

}  // namespace

std::vector<Case> HookStateCases() {
  return Join({StateNotJson(), StatePid(), StateFields(), StateTargetAndBundle(), PrecreateSpec()});
}

INSTANTIATE_TEST_SUITE_P(HookState, BadInput, ::testing::ValuesIn(HookStateCases()), CaseName);

}  // namespace ocirlimit::itest::badinput
