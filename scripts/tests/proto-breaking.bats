#!/usr/bin/env bats
# scripts/proto-breaking: the sources are compatible with the committed baseline, and the check fails on a change a
# deployed peer would notice but passes an additive one. The changes are made in a copy of the tree.

setup() {
  repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
  work="$(mktemp -d)"
  mkdir -p "$work/tree/scripts" "$work/tree/tools" "$work/tree/proto"
  cp "$repo/scripts/proto-breaking" "$repo/scripts/proto-tools" "$repo/scripts/go-toolchain" "$work/tree/scripts/"
  cp -r "$repo/tools/proto" "$work/tree/tools/"
  cp -r "$repo/proto/buf.yaml" "$repo/proto/buf-image.json" "$repo/proto/src" "$work/tree/proto/"
  proto="$work/tree/proto/src/main/protobuf/fencing/v1/fencing.proto"
}

teardown() {
  rm -rf "$work"
}

@test "proto-breaking passes on the checked-in sources" {
  run "$repo/scripts/proto-breaking"
  [ "$status" -eq 0 ]
  [[ "$output" == *"no breaking change"* ]]
}

@test "proto-breaking fails when a field is renumbered" {
  sed -i 's|^  optional string sourceName = 4;|  optional string sourceName = 5;|' "$proto"
  grep -q 'sourceName = 5;' "$proto"
  run "$work/tree/scripts/proto-breaking"
  [ "$status" -eq 1 ]
  [[ "$output" == *'"4"'*"sourceName"* || "$output" == *"sourceName"*'"4"'* ]]
  [[ "$output" == *"breaks deployed peers"* ]]
}

@test "proto-breaking fails when a field is removed without reserving its number" {
  sed -i '/^  optional string sourceName = 4;$/d' "$proto"
  run grep -q 'sourceName = 4;' "$proto"
  [ "$status" -eq 1 ]
  run "$work/tree/scripts/proto-breaking"
  [ "$status" -eq 1 ]
  [[ "$output" == *"Previously present field \"4\""* ]]
}

@test "proto-breaking fails when an RPC is removed" {
  sed -i '/^  rpc GetStatus(google.protobuf.Empty) returns (AgentStatus);$/d' "$proto"
  run grep -q 'rpc GetStatus' "$proto"
  [ "$status" -eq 1 ]
  run "$work/tree/scripts/proto-breaking"
  [ "$status" -eq 1 ]
  [[ "$output" == *"GetStatus"* ]]
}

@test "proto-breaking passes an additive change: a new field, a new enum value and a new RPC" {
  sed -i -e 's|^  optional string sourceName = 4;|&\n  optional string added_for_the_test = 99;|' \
         -e 's|^  JOIN = 2;|&\n  ADDED_FOR_THE_TEST = 3;|' \
         -e 's|^  rpc GetStatus(google.protobuf.Empty) returns (AgentStatus);|&\n  rpc AddedForTheTest(google.protobuf.Empty) returns (AllNodes);|' \
         "$proto"
  [ "$(grep -c 'added_for_the_test = 99;\|ADDED_FOR_THE_TEST = 3;\|rpc AddedForTheTest' "$proto")" -eq 3 ]
  run "$work/tree/scripts/proto-breaking"
  [ "$status" -eq 0 ]
}

@test "proto-breaking --update makes a deliberate break the new baseline" {
  sed -i 's|^  optional string sourceName = 4;|  optional string sourceName = 5;|' "$proto"
  run "$work/tree/scripts/proto-breaking"
  [ "$status" -eq 1 ]
  "$work/tree/scripts/proto-breaking" --update
  run "$work/tree/scripts/proto-breaking"
  [ "$status" -eq 0 ]
}

@test "proto-breaking rejects an unknown argument" {
  run "$repo/scripts/proto-breaking" --bogus
  [ "$status" -eq 2 ]
}
