#!/usr/bin/env python3
"""A shipped manifest with only the edits tests/cluster may make, on stdout:

    edit-manifest.py FILE [--rlimits VALUE]

- `hostNetwork: true` in every Pod and pod template (the test cluster has no pod network);
- with --rlimits, the value after each `--rlimits` in a container's command or args (this machine
  cannot raise a hard limit above 8 MiB, so `memlock=unlimited` cannot be given).
Everything else (images, node selectors, mounts, capabilities, commands) is applied as shipped.
"""
import sys
import yaml


def pod_specs(doc):
    kind = doc.get("kind")
    if kind == "Pod":
        yield doc["spec"]
    elif kind in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
        yield doc["spec"]["template"]["spec"]


def main():
    path, rlimits = sys.argv[1], None
    if len(sys.argv) == 4 and sys.argv[2] == "--rlimits":
        rlimits = sys.argv[3]
    elif len(sys.argv) != 2:
        sys.exit("usage: edit-manifest.py FILE [--rlimits VALUE]")
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    replaced = 0
    for doc in docs:
        for spec in pod_specs(doc):
            spec["hostNetwork"] = True
            for c in spec.get("initContainers", []) + spec.get("containers", []):
                for key in ("command", "args"):
                    argv = c.get(key) or []
                    for i, a in enumerate(argv[:-1]):
                        if a == "--rlimits" and rlimits is not None:
                            argv[i + 1] = rlimits
                            replaced += 1
    if rlimits is not None and not replaced:
        sys.exit(f"edit-manifest: {path}: no --rlimits to replace")
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
