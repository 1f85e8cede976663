#!/usr/bin/env bash
# check.sh BINARY — what CI can check of deploy/ without a cluster or a
# container daemon:
#   1. every manifest in deploy/k8s validates against Kubernetes' own schemas
#      (kubernetes-validate --strict: unknown fields are errors), offline;
#   2. the binary the image copies links only libraries the runtime image
#      (gcr.io/distroless/cc-debian12: glibc and libgcc_s) provides;
#   3. it runs (--version);
#   4. the ServiceMonitor (deploy/prometheus-operator, a custom resource the
#      schemas above do not cover) names what deploy/k8s has: a Service by
#      its labels, that Service's port, whose target is a container port of
#      every agent it selects, and the token's Secret and key.
# KUBERNETES_VALIDATE: the kubernetes-validate to use (default: from PATH).
# K8S_VERSION: the Kubernetes version to validate against (default 1.30.0).
# PYTHON: a Python with PyYAML (kubernetes-validate's venv has it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: deploy/check.sh PATH/TO/iorig}
kv=${KUBERNETES_VALIDATE:-kubernetes-validate}
version=${K8S_VERSION:-1.30.0}
py=${PYTHON:-python3}

"$kv" --strict --quiet -k "$version" "$here"/k8s/*.yaml
echo "deploy: $(ls "$here"/k8s/*.yaml | wc -l) manifests valid for Kubernetes $version (strict)"

# The runtime image has glibc's libraries and libgcc_s; nothing else.
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2|/lib64/ld-linux-x86-64\.so\.2)$'
if ldd "$bin" 2>&1 | grep -q "not a dynamic executable"; then
    echo "deploy: $bin is static"
else
    bad=$(ldd "$bin" | awk '{print $1}' | grep -Ev "$allowed" || true)
    if [[ -n $bad ]]; then
        echo "deploy: $bin links libraries the runtime image lacks: $bad (link them statically or choose another base image)" >&2
        exit 1
    fi
    echo "deploy: $bin links only $(ldd "$bin" | awk '{print $1}' | tr '\n' ' ')(all in distroless/cc-debian12)"
fi
"$bin" --version

"$py" - "$here" <<'PY'
import pathlib, sys, yaml
here = pathlib.Path(sys.argv[1])
docs = [d for f in sorted((here / "k8s").glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
def fail(why):
    sys.exit(f"deploy: servicemonitor.yaml: {why}")
for sm in yaml.safe_load_all((here / "prometheus-operator" / "servicemonitor.yaml").read_text()):
    ns = sm["metadata"]["namespace"]
    want = sm["spec"]["selector"]["matchLabels"]
    services = [d for d in docs if d["kind"] == "Service" and d["metadata"].get("namespace") == ns
                and want.items() <= d["metadata"].get("labels", {}).items()]
    if not services:
        fail(f"no Service in {ns} labelled {want}")
    for ep in sm["spec"]["endpoints"]:
        for svc in services:
            port = next((p for p in svc["spec"]["ports"] if p["name"] == ep["port"]), None)
            if port is None:
                fail(f"Service {svc['metadata']['name']} has no port {ep['port']}")
            sel = svc["spec"]["selector"]
            pods = [d for d in docs if d["kind"] in ("DaemonSet", "StatefulSet", "Deployment")
                    and sel.items() <= d["spec"]["template"]["metadata"].get("labels", {}).items()]
            if not pods:
                fail(f"Service {svc['metadata']['name']} selects no agent")
            for w in pods:
                names = [p.get("name") for c in w["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])]
                if port["targetPort"] not in names:
                    fail(f"{w['kind']} {w['metadata']['name']} has no container port {port['targetPort']}")
        cred = ep["authorization"]["credentials"]
        if not any(d["kind"] == "Secret" and d["metadata"]["name"] == cred["name"]
                   and cred["key"] in d.get("stringData", d.get("data", {})) for d in docs):
            fail(f"no Secret {cred['name']} with key {cred['key']}")
print(f"deploy: servicemonitor.yaml names {len(services)} service(s), their metrics port and the token secret")
PY
