#!/usr/bin/env bash
# check.sh BINARY — what CI can check of deploy/ without a cluster or a
# container daemon:
#   1. every manifest in deploy/k8s validates against Kubernetes' own schemas
#      (kubernetes-validate --strict: unknown fields are errors), offline;
#   2. the binary the image copies links only libraries the runtime image
#      (gcr.io/distroless/cc-debian12: glibc and libgcc_s) provides;
#   3. it runs (--version).
# KUBERNETES_VALIDATE: the kubernetes-validate to use (default: from PATH).
# K8S_VERSION: the Kubernetes version to validate against (default 1.30.0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: deploy/check.sh PATH/TO/iorig}
kv=${KUBERNETES_VALIDATE:-kubernetes-validate}
version=${K8S_VERSION:-1.30.0}

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
