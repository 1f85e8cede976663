#!/usr/bin/env bash
# image.sh BINARY [TAG] [OUT] — iorig's container image without a registry
# or a container daemon, for sites (and CI machines) that reach neither
# Docker Hub nor gcr.io: buildah (Debian's package) builds it FROM scratch
# with the binary and the libraries it links, copied from this machine as
# ldd names them (glibc and libgcc_s: what the Dockerfile's distroless base
# holds). The same entrypoint, command, port and user as deploy/Dockerfile.
#
# It then checks the image: its binary runs in a chroot of the image's
# root (--version, and a one-second run on the null engine), and writes
# the image as an OCI archive OUT (default ./iorig-image.tar) to load
# (`podman load -i OUT`) or push (`skopeo copy oci-archive:OUT
# docker://REGISTRY/iorig:VERSION`). Needs root (chroot, buildah's vfs
# storage); leaves no image or container behind in buildah's storage.
set -euo pipefail
bin=${1:?usage: deploy/image.sh PATH/TO/iorig [TAG] [OUT.tar]}
tag=${2:-localhost/iorig:dev}
out=${3:-iorig-image.tar}
b=(buildah --storage-driver vfs)

ctx=$(mktemp -d)
container=
cleanup() {
    if [[ -n $container ]]; then
        "${b[@]}" umount "$container" >/dev/null 2>&1 || true
        "${b[@]}" rm "$container" >/dev/null 2>&1 || true
    fi
    "${b[@]}" rmi -f "$tag" >/dev/null 2>&1 || true
    rm -rf "$ctx"
}
trap cleanup EXIT

mkdir -p "$ctx/rootfs/tmp" "$ctx/rootfs/results" "$ctx/rootfs/data" "$ctx/rootfs/etc/iorig"
chmod 1777 "$ctx/rootfs/tmp"
cp "$bin" "$ctx/iorig"
for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
    mkdir -p "$ctx/rootfs$(dirname "$lib")"
    cp -L "$lib" "$ctx/rootfs$(dirname "$lib")/"
done
cat > "$ctx/Containerfile" <<'CF'
FROM scratch
COPY rootfs/ /
COPY iorig /usr/local/bin/iorig
EXPOSE 7420
USER 0
ENTRYPOINT ["/usr/local/bin/iorig"]
CMD ["agent", "--listen", "0.0.0.0:7420", "--token-file", "/etc/iorig/token", "--results-dir", "/results"]
CF
"${b[@]}" bud --isolation chroot --quiet -f "$ctx/Containerfile" -t "$tag" "$ctx" >/dev/null

container=$("${b[@]}" from "$tag")
root=$("${b[@]}" mount "$container")
chroot "$root" /usr/local/bin/iorig --version
chroot "$root" /usr/local/bin/iorig run --engine null --time 1s --no-db --quiet | tail -1
entry=$("${b[@]}" inspect --format '{{.OCIv1.Config.Entrypoint}} {{.OCIv1.Config.Cmd}}' "$tag")
[[ $entry == "[/usr/local/bin/iorig] [agent "* ]] || { echo "image: entrypoint $entry is not the agent's" >&2; exit 1; }
"${b[@]}" push --quiet "$tag" "oci-archive:$out"
echo "image: $tag runs; written to $out ($(du -h "$out" | cut -f1)), entrypoint $entry"
