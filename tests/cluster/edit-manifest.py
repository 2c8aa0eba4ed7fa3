#!/usr/bin/env python3
"""A shipped manifest (or `kubectl kustomize` of an overlay, on stdin with FILE "-") with only the
edits tests/cluster may make, on stdout:

    edit-manifest.py FILE|- [--request VALUE] [--policy FILE]

- `hostNetwork: true` in every Pod and pod template (the test cluster has no pod network);
- with --request, the value of each pod's oci-rlimit.io/rlimits annotation (this machine cannot
  raise a hard limit above 8 MiB, so the example pod's request cannot be given as shipped);
- with --policy, the config.toml of the ConfigMap oci-rlimit-config (a policy change).
Everything else (images, node selectors, mounts, capabilities, commands) is applied as shipped.
"""
import sys
import yaml

REQUEST = "oci-rlimit.io/rlimits"


def pod_meta_specs(doc):
    kind = doc.get("kind")
    if kind == "Pod":
        yield doc.setdefault("metadata", {}), doc["spec"]
    elif kind in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
        t = doc["spec"]["template"]
        yield t.setdefault("metadata", {}), t["spec"]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: edit-manifest.py FILE|- [--request VALUE] [--policy FILE]")
    path, opts = args[0], dict(zip(args[1::2], args[2::2]))
    if len(args) % 2 != 1 or set(opts) - {"--request", "--policy"}:
        sys.exit("usage: edit-manifest.py FILE|- [--request VALUE] [--policy FILE]")
    docs = [d for d in yaml.safe_load_all(sys.stdin if path == "-" else open(path)) if d]
    requests = policies = 0
    for doc in docs:
        for meta, spec in pod_meta_specs(doc):
            spec["hostNetwork"] = True
            ann = meta.get("annotations") or {}
            if "--request" in opts and REQUEST in ann:
                ann[REQUEST] = opts["--request"]
                requests += 1
        if "--policy" in opts and doc.get("kind") == "ConfigMap" and \
                doc["metadata"]["name"] == "oci-rlimit-config":
            doc["data"]["config.toml"] = open(opts["--policy"]).read()
            policies += 1
    if "--request" in opts and not requests:
        sys.exit(f"edit-manifest: {path}: no {REQUEST} annotation to replace")
    if "--policy" in opts and not policies:
        sys.exit(f"edit-manifest: {path}: no ConfigMap oci-rlimit-config")
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
