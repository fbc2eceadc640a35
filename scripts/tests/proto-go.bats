#!/usr/bin/env bats
# scripts/proto-tools, scripts/proto-go: the checked-in Go code of fencing.v1 is what the pinned generators make
# from the .proto, and the check notices when it is not. The generators are built once into the shared cache
# (FENCING_PROTO_CACHE); the stale cases run on a copy of the tree so the work tree is never touched.

setup() {
  repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
  work="$(mktemp -d)"
}

teardown() {
  rm -rf "$work"
}

# a copy of what scripts/proto-go reads and writes, in $work/tree
copy_tree() {
  mkdir -p "$work/tree/scripts" "$work/tree/tools" "$work/tree/proto"
  cp "$repo/scripts/proto-go" "$repo/scripts/proto-tools" "$repo/scripts/go-toolchain" "$work/tree/scripts/"
  cp -r "$repo/tools/proto" "$work/tree/tools/"
  cp -r "$repo/proto/buf.yaml" "$repo/proto/buf.gen.yaml" "$repo/proto/src" "$repo/proto/go" "$work/tree/proto/"
}

@test "proto-go --check passes on the checked-in code" {
  run "$repo/scripts/proto-go" --check
  [ "$status" -eq 0 ]
  [[ "$output" == *"proto/go matches"* ]]
}

@test "proto-go --check fails when a field was added to the .proto but the Go code was not regenerated" {
  copy_tree
  sed -i 's|^  optional string sourceName = 4;|&\n  string added_for_the_test = 99;|' \
    "$work/tree/proto/src/main/protobuf/fencing/v1/fencing.proto"
  grep -q added_for_the_test "$work/tree/proto/src/main/protobuf/fencing/v1/fencing.proto"
  run "$work/tree/scripts/proto-go" --check
  [ "$status" -eq 1 ]
  [[ "$output" == *"AddedForTheTest"* ]]
  [[ "$output" == *"proto/go is stale"* ]]
  # regenerating makes the check pass again
  "$work/tree/scripts/proto-go"
  run "$work/tree/scripts/proto-go" --check
  [ "$status" -eq 0 ]
}

@test "proto-go --check fails when the generated code was edited by hand" {
  copy_tree
  echo "// edited" >> "$work/tree/proto/go/fencing/v1/fencing_grpc.pb.go"
  run "$work/tree/scripts/proto-go" --check
  [ "$status" -eq 1 ]
  [[ "$output" == *"+++ "*"fencing_grpc.pb.go"* ]]
}

@test "proto-go --check fails when a generated file is missing" {
  copy_tree
  rm "$work/tree/proto/go/fencing/v1/fencing_grpc.pb.go"
  run "$work/tree/scripts/proto-go" --check
  [ "$status" -eq 1 ]
  [[ "$output" == *"set of generated files differs"* ]]
}

@test "proto-tools reuses the cache keyed by tools/proto go.mod and go.sum without building" {
  hash=$(cat "$repo/tools/proto/go.mod" "$repo/tools/proto/go.sum" | sha256sum | cut -c1-12)
  dir="$work/cache/tools-$hash"
  mkdir -p "$dir" "$work/bin"
  for t in buf protoc-gen-go protoc-gen-go-grpc grpcurl; do printf '#!/bin/sh\n' > "$dir/$t"; chmod +x "$dir/$t"; done
  touch "$dir/.complete"
  # a Go new enough for scripts/go-toolchain that fails on any other use: a cache hit must not build
  # shellcheck disable=SC2016 # the $1 $2 $* belong to the fake go script, not to this test
  printf '#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && { echo go1.26.3; exit 0; }\necho "go $* was not expected" >&2\nexit 99\n' \
    > "$work/bin/go"
  chmod +x "$work/bin/go"
  FENCING_PROTO_CACHE="$work/cache" GO="$work/bin/go" run "$repo/scripts/proto-tools"
  [ "$status" -eq 0 ]
  [ "$output" = "$dir" ]
}

@test "proto-tools rejects an unknown argument" {
  run "$repo/scripts/proto-tools" --bogus
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown argument '--bogus'"* ]]
}

@test "the Go module proto/go builds from its go.sum, is gofmt-clean, and the example consumer's tests pass" {
  go_bin=$("$repo/scripts/go-toolchain")
  cd "$repo/proto/go"
  run "$(dirname "$go_bin")/gofmt" -l .
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  GOFLAGS=-mod=readonly run "$go_bin" vet ./...
  [ "$status" -eq 0 ]
  GOFLAGS=-mod=readonly run timeout 300 "$go_bin" test -count=1 -timeout 120s ./...
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"ok"*"examples/consumer"* ]]
}
