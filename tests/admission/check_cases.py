#!/usr/bin/env python3
"""The admission suite's case table (cases.txt), run both ways, one verdict each:

(a) the node: `oci-rlimit explain --json` on a bundle per container, made from the pod as the
    node sees it (the pod annotation on every container, containerd's keys and its default
    nofile entry): refused, started with a request note or warning, or started;
(b) the policy `oci-rlimit admission-policy` writes for the same config, applied to a real
    kube-apiserver (one namespace per config, bound by --namespace-selector): `kubectl create
    --dry-run=server`, then `kubectl apply`: denied, admitted with warnings, or admitted.

Both must give the case's EXPECT, and the policy's message must be the node's after
`container "FIRST": `. Usage: check_cases.py ENV_FILE OCI_RLIMIT SOURCE_DIR (ENV_FILE: the
fixture's, from apiserver.sh start; exit 77 when it is absent, as the fixture skipped).
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ANNOTATION = "oci-rlimit.io/rlimits"
LABEL = "oci-rlimit.io/admission-test"


class Case:
    def __init__(self, line):
        f = [x.strip() for x in line.split("|")]
        if len(f) != 6:
            raise ValueError(f"cases.txt: want 6 fields: {line!r}")
        self.name, self.config, kind, containers, ann, self.expect = f
        self.kind, _, self.op = kind.partition("@")
        if self.op not in OPS:
            raise ValueError(f"cases.txt: {self.name}: operation {self.op!r}")
        self.containers = []   # (name, init, ulimits)
        for c in containers.split(","):
            m = re.fullmatch(r"(i:|c:)?([a-z0-9-]+)(?:\{(.*)\})?(?:\*(\d+))?", c.strip())
            if not m:
                raise ValueError(f"cases.txt: {self.name}: container {c!r}")
            ulimits = []
            for u in filter(None, (m.group(3) or "").split(";")):
                name, soft, hard, n = re.fullmatch(r"(\w+)=(-?\d+):(-?\d+)(?:\*(\d+))?",
                                                   u).groups()
                ulimits += [{"name": name, "soft": int(soft), "hard": int(hard)}] * int(n or 1)
            names = ([m.group(2)] if m.group(4) is None else
                     [f"{m.group(2)}-{i}" for i in range(int(m.group(4)))])
            self.containers += [(n, m.group(1) == "i:", ulimits) for n in names]
        self.old_annotation = None   # an UPDATE's object before it (OLD => NEW)
        if " => " in ann:
            old, ann = ann.split(" => ")
            self.old_annotation = annotation_value(old)
        self.annotation = annotation_value(ann)
        if " => " not in f[4]:
            self.old_annotation = self.annotation
        if self.expect not in ("admit", "deny", "warn", "node-deny"):
            raise ValueError(f"cases.txt: {self.name}: EXPECT {self.expect!r}")

    def first(self):
        return self.ordered()[0][0]

    def ordered(self):
        """As the kubelet starts them: init containers first."""
        return [c for c in self.containers if c[1]] + [c for c in self.containers if not c[1]]


# KIND@OP: the case's object is made first (OLD, before the policy is bound, so it may be one
# the policy refuses), then changed by OP, whose verdict is the case's: "" makes it (CREATE);
# update applies NEW (the annotation changed); annotate overwrites a Pod's annotation with NEW;
# replicas applies OLD with 3 replicas; scale goes through the scale subresource; finalize
# deletes it, held by a finalizer, then removes the finalizer; deleting-update deletes it, held
# by a finalizer, then applies NEW; label labels it. Where OP changes nothing the nodes judge (replicas, scale,
# finalize, deleting-update) the node is not asked: its pods are judged when they are made.
OPS = ("", "update", "annotate", "label", "replicas", "scale", "finalize", "deleting-update")
UNJUDGED_OPS = ("label", "replicas", "scale", "finalize", "deleting-update")
FINALIZER = "oci-rlimit.io/admission-test"


def annotation_value(text):
    if text == "-":
        return None
    text = re.sub(r"\{SPACES:(\d+)\}", lambda m: " " * int(m.group(1)), json.loads(text))
    return re.sub(r"\{(\d+)\*([^}]*)\}", lambda m: m.group(2) * int(m.group(1)), text)


def read_cases(path):
    with open(path, encoding="utf-8") as f:
        return [Case(l) for l in f if l.strip() and not l.startswith("#")]


def pod_spec(case, restart):
    def c(n, ulimits):
        out = {"name": n, "image": "busybox", "command": ["sleep", "1"]}
        if ulimits:
            out["securityContext"] = {"ulimits": ulimits}
        return out
    spec = {"containers": [c(n, u) for n, i, u in case.containers if not i],
            "automountServiceAccountToken": False, "restartPolicy": restart}
    inits = [c(n, u) for n, i, u in case.containers if i]
    if inits:
        spec["initContainers"] = inits
    return spec


def manifest(case, old=False, replicas=None):
    """The case's object; old: as it was before the case's operation."""
    out = make_manifest(case, case.old_annotation if old else case.annotation)
    if old and case.op in ("finalize", "deleting-update"):
        out["metadata"]["finalizers"] = [FINALIZER]
    if replicas is not None:
        out["spec"]["replicas"] = replicas
    return out


def make_manifest(case, annotation):
    meta = {"annotations": {ANNOTATION: annotation}} if annotation is not None else {}
    restart = "Never" if case.kind in ("Pod", "UlimitsPod", "Job", "CronJob") else "Always"
    tmpl = {"metadata": {**meta, "labels": {"app": case.name}}, "spec": pod_spec(case, restart)}
    sel = {"matchLabels": {"app": case.name}}
    top = {"metadata": {"name": case.name}}
    if case.kind in ("Pod", "UlimitsPod"):
        api = "v1" if case.kind == "Pod" else f"{STAND_IN_GROUP}/v1"
        return {"apiVersion": api, "kind": "Pod", "metadata": {"name": case.name, **meta},
                "spec": pod_spec(case, restart)}
    if case.kind in ("Deployment", "DaemonSet", "ReplicaSet", "StatefulSet"):
        spec = {"selector": sel, "template": tmpl}
        if case.kind == "StatefulSet":
            spec["serviceName"] = case.name
        return {"apiVersion": "apps/v1", "kind": case.kind, **top, "spec": spec}
    if case.kind == "Job":
        return {"apiVersion": "batch/v1", "kind": "Job", **top, "spec": {"template": tmpl}}
    if case.kind == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob", **top,
                "spec": {"schedule": "0 0 * * *", "jobTemplate": {"spec": {"template": tmpl}}}}
    raise ValueError(f"{case.name}: kind {case.kind}")


class Verdict:
    def __init__(self, kind, messages):
        self.kind = kind          # admit, deny, warn
        self.messages = messages  # deny: [message]; warn: the warnings

    def __repr__(self):
        return f"{self.kind} {self.messages}"


def node_verdict(case, oci_rlimit, config, work):
    """explain on a bundle per container, in the kubelet's order (init first): the pod
    annotation on each, and in process.rlimits containerd's default nofile entry, then the
    container's securityContext.ulimits as the runtime writes them (-1: unlimited)."""
    notes = []
    for name, _, ulimits in case.ordered():
        ann = {"io.kubernetes.cri.container-type": "container",
               "io.kubernetes.cri.container-name": name,
               "io.kubernetes.cri.sandbox-namespace": "default",
               "io.kubernetes.cri.sandbox-name": case.name}
        if case.annotation is not None:
            ann[ANNOTATION] = case.annotation
        rlimits = [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]
        rlimits += [{"type": "RLIMIT_" + u["name"].upper(), "soft": u["soft"] % 2**64,
                     "hard": u["hard"] % 2**64} for u in ulimits]
        spec = {"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "annotations": ann,
                "process": {"args": ["sleep", "1"], "env": ["PATH=/bin"], "cwd": "/",
                            "rlimits": rlimits}}
        bundle = os.path.join(work, "bundle")
        os.makedirs(bundle, exist_ok=True)
        with open(os.path.join(bundle, "config.json"), "w", encoding="utf-8") as f:
            json.dump(spec, f)
        r = subprocess.run([oci_rlimit, "explain", "--bundle", bundle, "--config", config,
                            "--json"], capture_output=True, text=True, check=False)
        out = json.loads(r.stdout)
        if not out["ok"]:
            return Verdict("deny", [f'container "{name}": ' + out["error"]])
        said = [m for m in out["notes"] + out["verdict_warnings"]
                if f'"{ANNOTATION}"' in m or m.startswith("process.rlimits")]
        notes += [f'container "{name}": ' + m for m in said]
    return Verdict("warn", notes) if notes else Verdict("admit", [])


DENIED = re.compile(r"with binding '[^']*' denied request: (.*)$", re.S)
WARNED = re.compile(r"^Warning: Validation failed for ValidatingAdmissionPolicy '[^']*' with "
                    r"binding '[^']*': (.*)$")


def kubectl_verdict(kubectl, args, path, ns):
    files = ["-f", path] if path else []
    r = subprocess.run([kubectl, *args, "-n", ns, *files], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        m = DENIED.search(r.stderr.strip())
        return Verdict("deny", [m.group(1)] if m else ["(not the policy) " + r.stderr.strip()])
    warnings = [m.group(1) for l in r.stderr.splitlines() if (m := WARNED.match(l))]
    return Verdict("warn", warnings) if warnings else Verdict("admit", [])


# KEP-5758's securityContext.ulimits is not in this API server (v1.31): the "spec" config's
# policy is applied a second time, its CEL unchanged, matching a stand-in kind Pod of this group
# (a CRD that keeps any field), so the ulimits checks meet objects that carry the field.
STAND_IN_GROUP = "ulimits.test.oci-rlimit.io"
STAND_IN_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "pods." + STAND_IN_GROUP},
    "spec": {"group": STAND_IN_GROUP, "scope": "Namespaced",
             "names": {"plural": "pods", "singular": "pod", "kind": "Pod"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True}}}]}}
STAND_IN_RULES = f"""  matchConstraints:
    resourceRules:
    - apiGroups: ["{STAND_IN_GROUP}"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods"]
"""


def stand_in_policy(yaml_text):
    """The policy as written, but for the stand-in kind, under names of its own."""
    out = re.sub(r"  matchConstraints:\n(?:    .*\n)+", STAND_IN_RULES, yaml_text)
    return re.sub(r"(name|policyName): (adm-spec\S*)", r"\1: \2-stand-in", out)


def setup(kubectl, oci_rlimit, src, config, work, run):
    """A namespace per config and run, its ServiceAccount (no controller manager runs), the
    config's policy, bound to the namespaces labelled with the config."""
    ns = f"adm-{config}-{run}"
    manifest_ns = {"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": ns, "labels": {LABEL: config}}}
    sa = {"apiVersion": "v1", "kind": "ServiceAccount",
          "metadata": {"name": "default", "namespace": ns}}
    path = os.path.join(work, ns + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": [manifest_ns, sa]}, f)
    subprocess.run([kubectl, "apply", "-f", path], check=True, capture_output=True)
    policy = os.path.join(work, ns + ".yaml")
    cmd = [oci_rlimit, "admission-policy", "--config", f"{src}/configs/{config}.toml",
           "--name", "adm-" + config, "--namespace-selector", f"{LABEL}={config}", "--output", policy]
    if config.startswith("spec"):
        cmd.append("--ulimits-field")
    subprocess.run(cmd, check=True)
    print(f"policy of {config}: {os.path.getsize(policy)} bytes")
    subprocess.run([kubectl, "apply", "-f", policy], check=True, capture_output=True)
    if config.startswith("spec"):
        with open(policy, encoding="utf-8") as f:
            text = stand_in_policy(f.read())
        with open(policy + ".stand-in", "w", encoding="utf-8") as f:
            f.write(text)
        subprocess.run([kubectl, "apply", "-f", policy + ".stand-in"], check=True,
                       capture_output=True)
    return ns


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    return path


def make_old_objects(kubectl, work, cases, namespaces):
    """Each operation case's object as it was, in NS-pre, before that namespace gets the label
    its policy is bound to: an object the policy would refuse can exist, as one made before the
    policy was."""
    pre = {namespaces[c.config] + "-pre" for c in cases if c.op}
    for ns in sorted(pre):
        subprocess.run([kubectl, "create", "namespace", ns], check=True, capture_output=True)
        subprocess.run([kubectl, "-n", ns, "create", "serviceaccount", "default"], check=True,
                       capture_output=True)
    for c in cases:
        if c.op:
            path = write_json(os.path.join(work, c.name + ".old.json"), manifest(c, old=True))
            subprocess.run([kubectl, "apply", "-n", namespaces[c.config] + "-pre", "-f", path],
                           check=True, capture_output=True)
    for ns in sorted(pre):
        config = ns.split("-")[1]
        subprocess.run([kubectl, "label", "namespace", ns, f"{LABEL}={config}"], check=True,
                       capture_output=True)
    return sorted(pre)


def operate(kubectl, case, case_dir, ns):
    """An operation case's verdicts: --dry-run=server, then for real."""
    ref = f"{case.kind.lower()}/{case.name}"
    if case.op in ("finalize", "deleting-update"):
        subprocess.run([kubectl, "-n", ns, "delete", ref, "--wait=false"], check=True,
                       capture_output=True)
    if case.op in ("update", "deleting-update", "replicas"):
        obj = manifest(case, replicas=3 if case.op == "replicas" else None)
        path = write_json(os.path.join(case_dir, "object.json"), obj)
        return [kubectl_verdict(kubectl, ["apply", *dry], path, ns)
                for dry in (["--dry-run=server"], [])]
    if case.op == "annotate":
        value = f"{ANNOTATION}={case.annotation}" if case.annotation is not None else ANNOTATION + "-"
        args = ["annotate", "--overwrite", ref, value]
    elif case.op == "label":
        args = ["label", "--overwrite", ref, "touched=yes"]
    elif case.op == "scale":
        args = ["scale", "--replicas=3", ref]
    else:   # finalize
        args = ["patch", ref, "--type=json", "-p",
                '[{"op": "remove", "path": "/metadata/finalizers"}]']
    return [kubectl_verdict(kubectl, [*args, *dry], None, ns) for dry in (["--dry-run=server"], [])]


def wait_active(kubectl, work, namespaces, deadline_s=60):
    """The API server loads a new policy a moment after it is created: probe with a malformed
    request until every namespace's policy answers."""
    probe = Case("probe | x | Pod | c | \"memlock=probe\" | deny")
    path = os.path.join(work, "probe.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(manifest(probe), f)
    t0 = time.time()
    for ns in namespaces:
        while kubectl_verdict(kubectl, ["create", "--dry-run=server"], path, ns).kind == "admit":
            if time.time() - t0 > deadline_s:
                raise SystemExit(f"FAILED: the policy of {ns} never answered")
            time.sleep(0.3)


def check_type_checking(kubectl, deadline_s=240):
    """The API server's own type check of each policy against the kinds it matches (the
    controller manager's validatingadmissionpolicy-status-controller): no warning."""
    t0 = time.time()
    while True:
        r = subprocess.run([kubectl, "get", "validatingadmissionpolicies", "-o", "json"],
                           capture_output=True, text=True, check=True)
        ours = [p for p in json.loads(r.stdout)["items"] if p["metadata"]["name"].startswith("adm-")]
        pending = [p for p in ours if p.get("status", {}).get("observedGeneration")
                   != p["metadata"]["generation"]]
        if ours and not pending:
            break
        if time.time() - t0 > deadline_s:
            raise SystemExit(f"FAILED: no type check of {[p['metadata']['name'] for p in pending]}")
        time.sleep(0.5)
    warned = {p["metadata"]["name"]: p["status"]["typeChecking"]["expressionWarnings"]
              for p in ours if p["status"].get("typeChecking", {}).get("expressionWarnings")}
    print(f"type check of {len(ours)} policies: {warned or 'no warning'}")
    return not warned


def check(case, node, policy, applied):
    errs = []
    want_policy = "admit" if case.expect == "node-deny" else case.expect
    want_node = "deny" if case.expect == "node-deny" else case.expect
    if case.op not in UNJUDGED_OPS and node.kind != want_node:
        errs.append(f"node: {node} (want {want_node})")
    if policy.kind != want_policy:
        errs.append(f"policy (--dry-run=server): {policy} (want {want_policy})")
    if applied.kind != policy.kind or applied.messages != policy.messages:
        errs.append(f"kubectl apply: {applied}, but --dry-run=server: {policy}")
    if case.expect in ("deny", "warn") and node.kind == policy.kind:
        said = [m for m in policy.messages if not MORE.search(m) and not TOO_MANY.search(m)]
        unknown = [m for m in said if m not in node.messages]
        if unknown or not policy.messages:
            errs.append(f"policy says {policy.messages}, the node {node.messages}")
        # per container, the node's messages in the node's order, all of them (but for 4 KiB)
        more = any(MORE.search(m) for m in policy.messages)
        for p in dict.fromkeys(container_of(m) for m in said):
            mine = [m for m in said if container_of(m) == p]
            nodes = [m for m in node.messages if container_of(m) == p]
            if mine != nodes[:len(mine)] or (not more and mine != nodes):
                errs.append(f"{p}: the policy says {mine}, the node {nodes}")
    return errs


# The policy's own words: warnings past the API server's 4 KiB, a ulimits list too long to judge.
MORE = re.compile(r"^container \"[^\"]*\": \d+ more of the node's warnings for this pod left out")
TOO_MANY = re.compile(r"^securityContext.ulimits: more than \d+ entries")


def container_of(message):
    m = re.match(r'container "[^"]*": ', message)
    return m.group(0) if m else ""


def main():
    env_file, oci_rlimit, src = sys.argv[1:4]
    if not os.path.exists(env_file):
        print(f"SKIPPED: no API server ({env_file} is absent: the fixture skipped)")
        return 77
    env = dict(re.findall(r"^export (\w+)='([^']*)'$", open(env_file).read(), re.M))
    os.environ["KUBECONFIG"] = env["KUBECONFIG"]
    kubectl = env["K8S_KUBECTL"]
    cases = read_cases(os.path.join(src, "cases.txt"))
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="oci-rlimit-admission-")
    path = os.path.join(work, "crd.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(STAND_IN_CRD, f)
    subprocess.run([kubectl, "apply", "-f", path], check=True, capture_output=True)
    subprocess.run([kubectl, "wait", "--for=condition=Established", "--timeout=60s",
                    "crd/pods." + STAND_IN_GROUP], check=True, capture_output=True)
    run = f"{int(t0) % 100000}-{os.getpid() % 1000}"
    namespaces = {c: setup(kubectl, oci_rlimit, src, c, work, run)
                  for c in sorted({c.config for c in cases})}
    pre = make_old_objects(kubectl, work, cases, namespaces)
    wait_active(kubectl, work, [*namespaces.values(), *pre])
    print(f"policies made and applied in {time.time() - t0:.1f} s")

    def run_case(case):
        case_dir = os.path.join(work, case.name)
        os.makedirs(case_dir, exist_ok=True)
        if case.op in UNJUDGED_OPS:
            node = Verdict("-", [])
        else:
            node = node_verdict(case, oci_rlimit, f"{src}/configs/{case.config}.toml", case_dir)
        if case.op:
            return (node, *operate(kubectl, case, case_dir, namespaces[case.config] + "-pre"))
        path = write_json(os.path.join(case_dir, "object.json"), manifest(case))
        ns = namespaces[case.config]
        policy = kubectl_verdict(kubectl, ["create", "--dry-run=server"], path, ns)
        # kubectl apply's last-applied annotation does not fit a very large object
        big = os.path.getsize(path) > 100_000
        applied = kubectl_verdict(kubectl, ["create" if big else "apply"], path, ns)
        return node, policy, applied

    # A few cases at a time: each waits mostly on kubectl and the API server.
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run_case, cases))
    failed = 0
    for case, (node, policy, applied) in zip(cases, results):
        errs = check(case, node, policy, applied)
        failed += bool(errs)
        print(f"{'FAIL' if errs else 'ok  '} {case.name} ({case.config}, {case.kind}): "
              f"node {node.kind}, policy {policy.kind}")
        for e in errs:
            print("       " + e)
        if not errs and policy.messages:
            print("       " + policy.messages[0][:200])
    print(f"{len(cases) - failed}/{len(cases)} cases agree ({time.time() - t0:.1f} s)")
    # The type check (kube-controller-manager's, seconds of CPU per policy) ran meanwhile.
    typed = check_type_checking(kubectl)
    print(f"type-checked by {time.time() - t0:.1f} s")
    unbound = unbound_admitted(kubectl, work, run)
    replaced = regenerated_replaces(kubectl, oci_rlimit, src, work, run)
    return 0 if typed and not failed and unbound and replaced else 1


def regenerated_replaces(kubectl, oci_rlimit, src, work, run):
    """A policy made from clamp.toml (on-error = "fail": a malformed value refused), then the
    one made from warn.toml (on-error = "warn": the node starts it, warned) applied over it under
    the same --name: nothing the first bound may still deny."""
    ns = f"adm-regen-{run}"
    manifest_ns = {"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": ns, "labels": {LABEL: "regen"}}}
    subprocess.run([kubectl, "apply", "-f", write_json(os.path.join(work, "regen-ns.json"),
                                                       manifest_ns)], check=True, capture_output=True)
    subprocess.run([kubectl, "-n", ns, "create", "serviceaccount", "default"], check=True,
                   capture_output=True)
    probe = Case('regen | x | Pod | c | "memlock=5x" | warn')
    path = write_json(os.path.join(work, "regen-pod.json"), manifest(probe))
    verdicts = []
    for config in ("clamp", "warn"):
        policy = os.path.join(work, f"regen-{config}.yaml")
        subprocess.run([oci_rlimit, "admission-policy", "--config", f"{src}/configs/{config}.toml",
                        "--name", "adm-regen", "--namespace-selector", f"{LABEL}=regen",
                        "--output", policy], check=True)
        subprocess.run([kubectl, "apply", "-f", policy], check=True, capture_output=True)
        want = "deny" if config == "clamp" else "warn"
        t0 = time.time()
        while True:
            v = kubectl_verdict(kubectl, ["create", "--dry-run=server"], path, ns)
            if v.kind == want or time.time() - t0 > 30:
                break
            time.sleep(0.3)
        verdicts.append(v)
    ok = [v.kind for v in verdicts] == ["deny", "warn"]
    print(f"{'ok  ' if ok else 'FAIL'} regenerated from clamp.toml, then warn.toml: {verdicts}")
    return ok


def unbound_admitted(kubectl, work, run):
    """The bindings' --namespace-selector: a namespace without the label meets no policy."""
    ns = f"adm-unbound-{run}"
    subprocess.run([kubectl, "create", "namespace", ns], check=True, capture_output=True)
    subprocess.run([kubectl, "-n", ns, "create", "serviceaccount", "default"], check=True,
                   capture_output=True)
    over = Case('unbound | reject | Pod | c | "memlock=1T" | deny')
    path = os.path.join(work, "unbound.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(manifest(over), f)
    v = kubectl_verdict(kubectl, ["create", "--dry-run=server"], path, ns)
    print(f"{'ok  ' if v.kind == 'admit' else 'FAIL'} a namespace outside the selector: {v}")
    return v.kind == "admit"


if __name__ == "__main__":
    sys.exit(main())
