#!/usr/bin/env bats
# scripts/go-toolchain and scripts/kube-binaries without the network: fake Go binaries and a prepared cache.

# a fake `go` of a given version that refuses to build (so a cache hit is proven to build nothing)
fake_go() {
  cat > "$1" <<SCRIPT
#!/usr/bin/env bash
if [ "\$1" = env ] && [ "\$2" = GOVERSION ]; then echo "go$2"; exit 0; fi
if [ "\$1" = version ]; then echo "go version go$2 linux/amd64"; exit 0; fi
echo "fake go $2: \$* was not expected" >&2
exit 99
SCRIPT
  chmod +x "$1"
}

# empty executables standing for built binaries: fake_binaries DIR NAME...
fake_binaries() {
  local dir=$1 b
  shift
  mkdir -p "$dir"
  for b in "$@"; do
    printf '#!/bin/sh\n' > "$dir/$b"
    chmod +x "$dir/$b"
  done
}

setup() {
  repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
  work="$(mktemp -d)"
  export FENCING_KUBE_CACHE="$work/cache"
  mkdir -p "$work/bin"
}

teardown() {
  rm -rf "$work"
}

@test "go-toolchain uses GO when it is 1.26 or later" {
  fake_go "$work/bin/go-new" 1.26.3
  GO="$work/bin/go-new" run "$repo/scripts/go-toolchain"
  [ "$status" -eq 0 ]
  [ "$output" = "$work/bin/go-new" ]
}

@test "go-toolchain uses the downloaded Go in the cache instead of an old one, without downloading again" {
  fake_go "$work/bin/go-old" 1.19.8
  mkdir -p "$FENCING_KUBE_CACHE/go1.26.8/bin"
  fake_go "$FENCING_KUBE_CACHE/go1.26.8/bin/go" 1.26.8
  GO="$work/bin/go-old" run "$repo/scripts/go-toolchain" --download
  [ "$status" -eq 0 ]
  [ "$output" = "$FENCING_KUBE_CACHE/go1.26.8/bin/go" ]
}

@test "go-toolchain refuses an unknown argument" {
  run "$repo/scripts/go-toolchain" --bogus
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown argument '--bogus'"* ]]
}

@test "kube-binaries refuses an unknown argument" {
  run "$repo/scripts/kube-binaries" --bogus
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown argument '--bogus'"* ]]
}

@test "kube-binaries reuses a complete cache directory and builds nothing" {
  fake_go "$work/bin/go" 1.26.8
  cd "$repo/tools/kube"
  hash=$(cat go.mod go.sum | sha256sum | cut -c1-12)
  standin=$(cat go.mod go.sum cmd/kubelet-standin/*.go | sha256sum | cut -c1-12)
  dir="$FENCING_KUBE_CACHE/kube-v1.37.2-etcd-v3.7.0-$hash"
  helm=$(cat ../helm/go.mod ../helm/go.sum | sha256sum | cut -c1-12)
  fake_binaries "$dir" etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet-standin helm
  echo "kubernetes=v1.37.2" > "$dir/.complete"
  echo "$standin" > "$dir/.kubelet-standin"
  echo "$helm" > "$dir/.helm"
  GO="$work/bin/go" run "$repo/scripts/kube-binaries"
  [ "$status" -eq 0 ]
  [ "$output" = "$dir" ]
}

@test "kube-binaries rebuilds a directory without kubectl" {
  fake_go "$work/bin/go" 1.26.8
  cd "$repo/tools/kube"
  hash=$(cat go.mod go.sum | sha256sum | cut -c1-12)
  dir="$FENCING_KUBE_CACHE/kube-v1.37.2-etcd-v3.7.0-$hash"
  fake_binaries "$dir" etcd kube-apiserver kube-controller-manager kube-scheduler
  echo "kubernetes=v1.37.2" > "$dir/.complete"
  GO="$work/bin/go" run "$repo/scripts/kube-binaries"
  [ "$status" -ne 0 ]
  [[ "$output" == *"building Kubernetes v1.37.2"* ]]
}

@test "kube-binaries rebuilds only helm, from tools/helm, when its stamp is stale" {
  # a go that builds only helm: it writes the -o file and records where it ran
  cat > "$work/bin/go" <<'SCRIPT'
#!/usr/bin/env bash
if [ "$1" = env ] && [ "$2" = GOVERSION ]; then echo go1.26.8; exit 0; fi
if [ "$1" = build ] && [ "${*: -1}" = helm.sh/helm/v3/cmd/helm ]; then
  while [ "$#" -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
  printf '#!/bin/sh\necho fake helm\n' > "$out"
  echo "$PWD $GOFLAGS CGO_ENABLED=$CGO_ENABLED" > "$(dirname "$out")/go-ran-in"
  exit 0
fi
echo "unexpected: go $*" >&2
exit 99
SCRIPT
  chmod +x "$work/bin/go"
  cd "$repo/tools/kube"
  hash=$(cat go.mod go.sum | sha256sum | cut -c1-12)
  standin=$(cat go.mod go.sum cmd/kubelet-standin/*.go | sha256sum | cut -c1-12)
  dir="$FENCING_KUBE_CACHE/kube-v1.37.2-etcd-v3.7.0-$hash"
  fake_binaries "$dir" etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet-standin helm
  echo "kubernetes=v1.37.2" > "$dir/.complete"
  echo "$standin" > "$dir/.kubelet-standin"
  echo "stale" > "$dir/.helm"
  GO="$work/bin/go" run "$repo/scripts/kube-binaries"
  [ "$status" -eq 0 ]
  [[ "$output" == *"building Helm v3."* ]]
  [ "${lines[-1]}" = "$dir" ]
  [ "$("$dir/helm")" = "fake helm" ]
  [ "$(cat "$dir/go-ran-in")" = "$(cd "$repo/tools/helm" && pwd) -mod=readonly -buildvcs=false CGO_ENABLED=0" ]
  [ "$(cat "$dir/.helm")" = "$(cat "$repo/tools/helm/go.mod" "$repo/tools/helm/go.sum" | sha256sum | cut -c1-12)" ]
}

@test "kube-binaries rebuilds a directory that lacks a binary (and says how it failed)" {
  fake_go "$work/bin/go" 1.26.8
  cd "$repo/tools/kube"
  hash=$(cat go.mod go.sum | sha256sum | cut -c1-12)
  dir="$FENCING_KUBE_CACHE/kube-v1.37.2-etcd-v3.7.0-$hash"
  mkdir -p "$dir"
  echo "kubernetes=v1.37.2" > "$dir/.complete"
  GO="$work/bin/go" run "$repo/scripts/kube-binaries"
  [ "$status" -ne 0 ]
  [[ "$output" == *"building Kubernetes v1.37.2"* ]]
  [[ "$output" == *"fake go 1.26.8: build"* ]]
}
