#!/usr/bin/env python3
"""What `kubectl kustomize` makes of each overlay (check-overlays.sh): the fleet's one policy.

    check-overlays.py PACKAGING_KUBERNETES_DIR BUILT_DIR   (BUILT_DIR/OVERLAY.yaml each)

- every node-program overlay holds the ConfigMap oci-rlimit-config, named without a content hash,
  whose config.toml is base/config.toml byte for byte;
- every DaemonSet mounts it whole (a configMap volume, no subPath anywhere) and its programs read
  the file there: the installers' --policy (no --rlimits), the plugin's and audit's --config;
- audit, the plugin and the installers' sync container have a readiness probe;
- audit-crio mounts CRI-O's config and storage read-only where audit reads them;
- the shipped policy's ceilings are finite (the admission policy made from it can refuse);
- the admission overlay is admission-policy.yaml as committed, with its digest annotation.
Prints one line per problem and exits 1; "ok" otherwise.
"""
import sys
import yaml

CM = "oci-rlimit-config"
WANT = {
    "handler": {"oci-rlimit-installer"},
    "handler-nvidia": {"oci-rlimit-installer", "oci-rlimit-installer-nvidia"},
    "nri": {"oci-rlimit-nri"},
    "audit": {"oci-rlimit-audit-metrics"},
    "audit-crio": {"oci-rlimit-audit-metrics"},
}
# What audit-crio adds: CRI-O's config and storage, read-only, at the node's own paths.
CRIO_MOUNTS = {"/etc/crio", "/var/lib/containers/storage"}


def argv_of(c):
    argv = list(c.get("command") or []) + list(c.get("args") or [])
    return argv, " ".join(argv)


def config_path(argv, text):
    """The fleet file a container's program reads: --policy, --config, or audit's --config."""
    for flag in ("--policy", "--config"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
        at = text.find(flag + " ")
        if at >= 0:
            return text[at + len(flag) + 1:].split()[0]
    return None


def check_daemonset(name, ds, problems):
    spec = ds["spec"]["template"]["spec"]
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    fleet = [n for n, v in vols.items() if v.get("configMap", {}).get("name") == CM]
    if not fleet:
        problems.append(f"{name}: no volume of ConfigMap {CM}")
    for v in vols.values():
        if "configMap" in v and v["configMap"]["name"] != CM:
            problems.append(f"{name}: mounts ConfigMap {v['configMap']['name']}, not {CM}")
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        argv, text = argv_of(c)
        for m in c.get("volumeMounts", []):
            if "subPath" in m or "subPathExpr" in m:
                problems.append(f"{name}/{c['name']}: subPath on {m['mountPath']}: kubelet never updates it")
        if "--rlimits" in text:
            problems.append(f"{name}/{c['name']}: --rlimits in its command; the fleet file decides")
        path = config_path(argv, text)
        if path is None:
            continue
        mounts = [m for m in c.get("volumeMounts", []) if m["name"] in fleet]
        if not any(path.startswith(m["mountPath"].rstrip("/") + "/") for m in mounts):
            problems.append(f"{name}/{c['name']}: reads {path}, not under its {CM} mount")
        if c["name"] in ("sync", "audit", "plugin") and "readinessProbe" not in c:
            problems.append(f"{name}/{c['name']}: no readinessProbe")


def check_crio_mounts(ds, problems):
    spec = ds["spec"]["template"]["spec"]
    host = {v["name"]: v["hostPath"]["path"] for v in spec.get("volumes", []) if "hostPath" in v}
    audit = [c for c in spec["containers"] if c["name"] == "audit"]
    mounts = audit[0].get("volumeMounts", []) if audit else []
    for path in sorted(CRIO_MOUNTS):
        m = [m for m in mounts if m["mountPath"] == path and host.get(m["name"]) == path]
        if not m:
            problems.append(f"audit-crio: {path} is not mounted from the node's {path}")
        elif not m[0].get("readOnly"):
            problems.append(f"audit-crio: {path} is mounted read-write")


def main():
    kube, built = sys.argv[1], sys.argv[2]
    problems = []
    fleet_text = open(f"{kube}/base/config.toml").read()
    for overlay, want in WANT.items():
        docs = [d for d in yaml.safe_load_all(open(f"{built}/{overlay}.yaml")) if d]
        cms = [d for d in docs if d["kind"] == "ConfigMap"]
        if [d["metadata"]["name"] for d in cms] != [CM]:
            problems.append(f"{overlay}: ConfigMaps {[d['metadata']['name'] for d in cms]}, want [{CM}]")
        elif cms[0]["data"].get("config.toml") != fleet_text:
            problems.append(f"{overlay}: {CM}'s config.toml is not base/config.toml")
        dss = {d["metadata"]["name"]: d for d in docs if d["kind"] == "DaemonSet"}
        if set(dss) != want:
            problems.append(f"{overlay}: DaemonSets {sorted(dss)}, want {sorted(want)}")
        for name, ds in dss.items():
            check_daemonset(f"{overlay}/{name}", ds, problems)
        if overlay == "audit-crio" and "oci-rlimit-audit-metrics" in dss:
            check_crio_mounts(dss["oci-rlimit-audit-metrics"], problems)
    for line in fleet_text.splitlines():
        if line.strip().startswith("ceilings") and "unlimited" in line:
            problems.append("base/config.toml: an unlimited ceiling: the admission policy can never refuse")
    built_adm = [d for d in yaml.safe_load_all(open(f"{built}/admission.yaml")) if d]
    shipped = [d for d in yaml.safe_load_all(open(f"{kube}/admission/admission-policy.yaml")) if d]
    key = lambda d: (d["kind"], d["metadata"]["name"])
    if sorted(built_adm, key=key) != sorted(shipped, key=key):
        problems.append("admission: kustomize's output is not admission-policy.yaml")
    if not any("oci-rlimit.io/policy-digest" in d["metadata"].get("annotations", {}) for d in shipped):
        problems.append("admission: no oci-rlimit.io/policy-digest annotation")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
