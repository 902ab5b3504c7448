#!/usr/bin/env bash
# Turn the lapa Docker image into the Enroot SquashFS file (.sqsh) that Slurm jobs run through Pyxis
# (`lapa slurm submit STAGE slurm.container_image=OUTPUT.sqsh`). Run it on a login node that has Enroot.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: containers/enroot.sh IMAGE OUTPUT.sqsh [NAME]

  IMAGE        what `enroot import` reads: docker://REGISTRY#REPO:TAG (a registry; credentials in
               ~/.config/enroot/.credentials) or dockerd://lapa:latest (the local Docker daemon)
  OUTPUT.sqsh  the SquashFS image to write, e.g. /dss/dssfs04/pn57pi/containers/lapa_v1.sqsh
  NAME         the Enroot container created on the way (default: lapa_v1; removed again at the end)

The three steps of the blueprint:
  enroot import --output TMP.sqsh IMAGE      pull the layers into one SquashFS file
  enroot create --name NAME TMP.sqsh         unpack it into a container root filesystem
  enroot export --output OUTPUT.sqsh NAME    pack that filesystem into the final, immutable image

Build the Docker image first:  docker build -f containers/Dockerfile -t lapa:latest .
Then, e.g.:                    containers/enroot.sh dockerd://lapa:latest /dss/dssfs04/pn57pi/containers/lapa_v1.sqsh
USAGE
}

case "${1:-}" in
    -h|--help) usage; exit 0 ;;
esac
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    usage >&2; exit 2
fi

image=$1
output=$2
name=${3:-lapa_v1}

if ! command -v enroot >/dev/null 2>&1; then
    echo "enroot.sh: enroot is not installed here (it is on LRZ's login and compute nodes)" >&2; exit 1
fi
if [ -e "$output" ]; then
    echo "enroot.sh: $output exists; remove it or name another file" >&2; exit 1
fi
mkdir -p "$(dirname "$output")"

tmp=$(mktemp -d)
cleanup() {
    enroot remove --force "$name" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

echo "enroot import $image"
enroot import --output "$tmp/import.sqsh" "$image"
echo "enroot create --name $name"
enroot remove --force "$name" >/dev/null 2>&1 || true
enroot create --name "$name" "$tmp/import.sqsh"
echo "enroot export --output $output $name"
enroot export --output "$output.partial" "$name"
mv "$output.partial" "$output"
echo "wrote $output"
