#!/usr/bin/env python3
"""packaging/kubernetes/podmonitor.yaml against the Prometheus Operator's PodMonitor schema
(monitoring.coreos.com/v1, the fields of its CRD written down below: the CRD is not installed
here, and `kubectl apply --dry-run=client` cannot validate an unknown kind), and against
nri/nri-daemonset.yaml: its selector picks the plugin's pods, in their namespace, on a port they
name, and the job is the one prometheus-rules.yaml reads. Then the same checks on broken copies,
each of which must be refused (so the check can fail).

usage: check-podmonitor.py PACKAGING_KUBERNETES_DIR
"""
import copy
import sys

import yaml

# PodMonitor.spec and PodMetricsEndpoint's properties in the Operator's CRD (v0.7x).
SPEC = {
    "attachMetadata", "bodySizeLimit", "jobLabel", "keepDroppedTargets", "labelLimit",
    "labelNameLengthLimit", "labelValueLengthLimit", "namespaceSelector", "podMetricsEndpoints",
    "podTargetLabels", "sampleLimit", "scrapeClass", "scrapeProtocols", "selector",
    "targetLimit",
}
ENDPOINT = {
    "authorization", "basicAuth", "bearerTokenSecret", "enableHttp2", "filterRunning",
    "followRedirects", "honorLabels", "honorTimestamps", "interval", "metricRelabelings",
    "oauth2", "params", "path", "port", "portNumber", "proxyUrl", "relabelings", "scheme",
    "scrapeTimeout", "targetPort", "tlsConfig", "trackTimestampsStaleness",
}
SELECTOR = {"matchLabels", "matchExpressions"}
NAMESPACE_SELECTOR = {"any", "matchNames"}
DURATION = "0123456789smhdwy"
JOB = "oci-rlimit-nri"  # prometheus-rules.yaml's up{job="oci-rlimit-nri"}


def problems(pm, ds):
    out = []
    def unknown(where, got, allowed):
        out.extend(f"{where}.{k}: not a field of the CRD" for k in sorted(set(got) - allowed))
    if pm.get("apiVersion") != "monitoring.coreos.com/v1" or pm.get("kind") != "PodMonitor":
        out.append("apiVersion/kind: want monitoring.coreos.com/v1 PodMonitor")
    spec = pm.get("spec") or {}
    unknown("spec", spec, SPEC)
    sel = spec.get("selector")
    if not isinstance(sel, dict):
        return out + ["spec.selector: required"]
    unknown("spec.selector", sel, SELECTOR)
    unknown("spec.namespaceSelector", spec.get("namespaceSelector") or {}, NAMESPACE_SELECTOR)
    tmpl = ds["spec"]["template"]
    pod_labels = tmpl["metadata"]["labels"]
    for k, v in (sel.get("matchLabels") or {}).items():
        if pod_labels.get(k) != v:
            out.append(f"spec.selector.matchLabels.{k}={v}: the plugin's pods do not carry it")
    ns = ds["metadata"]["namespace"]
    names = (spec.get("namespaceSelector") or {}).get("matchNames")
    if names is not None and ns not in names:
        out.append(f"spec.namespaceSelector.matchNames: misses the plugin's namespace {ns}")
    if names is None and pm["metadata"].get("namespace") != ns:
        out.append(f"metadata.namespace: not the plugin's {ns}, and no namespaceSelector")
    job = pod_labels.get(spec.get("jobLabel", ""), None)
    if job != JOB:
        out.append(f"spec.jobLabel: gives job {job!r}; the alerts read job={JOB!r}")
    ports = {p.get("name") for c in tmpl["spec"]["containers"] for p in c.get("ports", [])}
    eps = spec.get("podMetricsEndpoints")
    if not isinstance(eps, list) or not eps:
        out.append("spec.podMetricsEndpoints: at least one")
    for i, ep in enumerate(eps or []):
        unknown(f"spec.podMetricsEndpoints[{i}]", ep, ENDPOINT)
        if ep.get("port") not in ports:
            out.append(f"spec.podMetricsEndpoints[{i}].port {ep.get('port')!r}: the plugin's "
                       f"ports are {sorted(p for p in ports if p)}")
        if ep.get("path", "/metrics") != "/metrics":
            out.append(f"spec.podMetricsEndpoints[{i}].path: the plugin serves /metrics only")
        for d in ("interval", "scrapeTimeout"):
            if d in ep and (not str(ep[d]) or any(ch not in DURATION for ch in str(ep[d]))):
                out.append(f"spec.podMetricsEndpoints[{i}].{d} {ep[d]!r}: not a duration")
        if ep.get("honorLabels") is not True:
            out.append(f"spec.podMetricsEndpoints[{i}].honorLabels: true keeps the node label")
    return out


def main():
    d = sys.argv[1]
    pm = yaml.safe_load(open(f"{d}/podmonitor.yaml"))
    ds = next(doc for doc in yaml.safe_load_all(open(f"{d}/nri/nri-daemonset.yaml"))
              if doc and doc.get("kind") == "DaemonSet")
    bad = problems(pm, ds)
    for p in bad:
        print(f"podmonitor.yaml: {p}")
    # Broken copies: each must be refused.
    def broken(edit):
        b = copy.deepcopy(pm)
        edit(b)
        return b
    cases = {
        "unknown field": broken(lambda b: b["spec"]["podMetricsEndpoints"][0].update(prot=1)),
        "wrong port": broken(lambda b: b["spec"]["podMetricsEndpoints"][0].update(port="http")),
        "wrong selector": broken(lambda b: b["spec"]["selector"]["matchLabels"].update(x="y")),
        "no selector": broken(lambda b: b["spec"].pop("selector")),
        "other namespace": broken(lambda b: b["spec"]["namespaceSelector"].update(
            matchNames=["default"])),
    }
    for name, b in cases.items():
        if not problems(b, ds):
            bad.append(name)
            print(f"self-test: a podmonitor.yaml with {name} passed the check")
    if bad:
        sys.exit(1)
    print("podmonitor.yaml: ok")


if __name__ == "__main__":
    main()
