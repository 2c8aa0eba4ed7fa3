#!/usr/bin/env python3
"""Builds container images offline, as `docker build` would, into one OCI layout tar.

    build-image.py OUT.tar BASE_ROOTFS SPEC...

SPEC is `NAME=base` (the base rootfs alone, with CMD from --cmd), or
`NAME=DOCKERFILE:CONTEXT[:ARG=VALUE,...]`. A Dockerfile may use only what the
shipped ones use: comments, ARG (with a default), FROM (of ARG BASE, which is
BASE_ROOTFS), COPY SRC... DEST (globs, relative to CONTEXT), ENTRYPOINT and CMD
in their JSON form; anything else is refused, so a Dockerfile that grows a RUN
fails here instead of building something else. Each image is the base layer
plus one layer of its COPYs. NAME is the image's full reference (containerd's
`io.containerd.image.name`), e.g. docker.io/library/oci-rlimit-installer:0.1.0.
A base spec may add a command: `NAME=base:sleep,2147483647`.
"""
import glob
import hashlib
import io
import json
import os
import re
import sys
import tarfile


def die(msg):
    sys.exit("build-image: " + msg)


def tar_of(entries):
    """entries: list of (arcname, source path or None for a directory)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for arc, src in entries:
            info = t.gettarinfo(src, arcname=arc) if src else tarfile.TarInfo(arc)
            if src is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isreg():
                with open(src, "rb") as f:
                    t.addfile(info, f)
            else:
                t.addfile(info)
    return buf.getvalue()


def rootfs_entries(root):
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(dirpath, root)
        if rel != ".":
            out.append((rel, dirpath))
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]):
            out.append((os.path.normpath(os.path.join(rel, name)), os.path.join(dirpath, name)))
    return out


class Layout:
    def __init__(self):
        self.blobs = {}
        self.index = []

    def blob(self, data):
        h = hashlib.sha256(data).hexdigest()
        self.blobs[h] = data
        return {"digest": "sha256:" + h, "size": len(data)}

    def image(self, name, layers, config):
        diff_ids = ["sha256:" + hashlib.sha256(l).hexdigest() for l in layers]
        cfg = {"architecture": "amd64", "os": "linux", "config": config,
               "rootfs": {"type": "layers", "diff_ids": diff_ids}}
        c = self.blob(json.dumps(cfg, sort_keys=True).encode())
        man = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
               "config": dict(mediaType="application/vnd.oci.image.config.v1+json", **c),
               "layers": [dict(mediaType="application/vnd.oci.image.layer.v1.tar", **self.blob(l))
                          for l in layers]}
        m = self.blob(json.dumps(man, sort_keys=True).encode())
        self.index.append(dict(mediaType="application/vnd.oci.image.manifest.v1+json",
                               platform={"architecture": "amd64", "os": "linux"},
                               annotations={"io.containerd.image.name": name,
                                            "org.opencontainers.image.ref.name": name}, **m))

    def write(self, out):
        with tarfile.open(out, "w") as t:
            def add(name, data):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
            add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
            add("index.json", json.dumps({"schemaVersion": 2, "manifests": self.index}).encode())
            for h, data in sorted(self.blobs.items()):
                add("blobs/sha256/" + h, data)


def expand(text, args):
    def sub(m):
        k = m.group(1) or m.group(2)
        if k not in args:
            die(f"${{{k}}} is not a declared ARG")
        return args[k]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", sub, text)


def from_dockerfile(path, context, build_args):
    """Returns (copy layer entries, image config) for the Dockerfile."""
    args, entries, config, seen_from = {}, [], {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}, False
    text = open(path).read().replace("\\\n", " ")
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        word, rest = word.upper(), rest.strip()
        where = f"{path}:{n}"
        if word == "ARG":
            k, eq, v = rest.partition("=")
            args[k] = build_args.get(k, v if eq else "")
        elif word == "FROM":
            base = expand(rest, args)
            if base != "BASE" and build_args.get("BASE") != base:
                die(f"{where}: FROM {base}: only the base image (ARG BASE) is known here")
            seen_from = True
        elif word == "COPY":
            if not seen_from:
                die(f"{where}: COPY before FROM")
            parts = expand(rest, args).split()
            if any(p.startswith("--") for p in parts):
                die(f"{where}: COPY flags are not supported: {rest}")
            srcs, dest = parts[:-1], parts[-1]
            files = []
            for s in srcs:
                hits = sorted(glob.glob(os.path.join(context, s)))
                if not hits:
                    die(f"{where}: COPY {s}: no such file in {context}")
                files += hits
            if len(files) > 1 and not dest.endswith("/"):
                die(f"{where}: COPY of several files to {dest}, which does not end in /")
            d = dest.strip("/")
            for i in range(1, len(d.split("/")) + (0 if not dest.endswith("/") else 1)):
                entries.append(("/".join(d.split("/")[:i]), None))
            for f in files:
                if os.path.isdir(f):
                    die(f"{where}: COPY of a directory ({f}) is not supported here")
                arc = d + "/" + os.path.basename(f) if dest.endswith("/") else d
                entries.append((arc, f))
        elif word in ("ENTRYPOINT", "CMD"):
            try:
                v = json.loads(rest)
            except ValueError:
                die(f"{where}: {word} must be a JSON list here: {rest}")
            config["Entrypoint" if word == "ENTRYPOINT" else "Cmd"] = v
        else:
            die(f"{where}: {word} is not supported by this offline builder")
    if not seen_from:
        die(f"{path}: no FROM")
    seen, unique = set(), []
    for arc, src in entries:
        if arc not in seen:
            seen.add(arc)
            unique.append((arc, src))
    return unique, config


def main():
    if len(sys.argv) < 4:
        die("usage: build-image.py OUT.tar BASE_ROOTFS SPEC...")
    out, base_root, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    base_layer = tar_of(rootfs_entries(base_root))
    layout = Layout()
    for spec in specs:
        name, _, what = spec.partition("=")
        if what.startswith("base"):
            cmd = what.partition(":")[2]
            cfg = {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                   "Cmd": cmd.split(",") if cmd else ["/bin/sh"]}
            layout.image(name, [base_layer], cfg)
            continue
        parts = what.split(":")
        if len(parts) < 2:
            die(f"{spec}: want NAME=DOCKERFILE:CONTEXT[:ARG=VALUE,...]")
        bargs = dict(a.split("=", 1) for a in parts[2].split(",")) if len(parts) > 2 and parts[2] else {}
        entries, cfg = from_dockerfile(parts[0], parts[1], bargs)
        layout.image(name, [base_layer, tar_of(entries)], cfg)
    layout.write(out)


if __name__ == "__main__":
    main()
