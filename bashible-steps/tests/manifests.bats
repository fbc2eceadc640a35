#!/usr/bin/env bats
# render-manifests and bashible-steps/deckhouse/*.yaml: NodeGroupConfiguration manifests generated from the steps.

load test_helper

# A copy of the steps and the renderer to change freely.
copy_steps() {
  COPY="$BATS_TEST_TMPDIR/steps"
  mkdir -p "$COPY"
  cp "$STEPS_DIR"/[0-9][0-9][0-9]_*.sh.tpl "$STEPS_DIR/render-manifests" "$COPY/"
  cp -r "$STEPS_DIR/deckhouse" "$COPY/"
}

@test "the checked-in manifests are what render-manifests makes from the steps" {
  run -0 "$RENDER" --check

  [[ "$output" == *"is up to date"* ]]
}

@test "a step changed after rendering makes the check fail, naming the manifest" {
  copy_steps
  echo "# changed" >>"$COPY/002_fencing_disarm_before_disruption.sh.tpl"

  run -1 "$COPY/render-manifests" --check

  [[ "$output" == *"stale: $COPY/deckhouse/fencing-disarm-before-disruption.yaml"* ]]
  [[ "$output" != *"fencing-softdog.yaml"* ]]
  [[ "$output" == *"run bashible-steps/render-manifests"* ]]

  run -0 "$COPY/render-manifests"
  [[ "$output" == *"wrote $COPY/deckhouse/fencing-disarm-before-disruption.yaml"* ]]
  [[ "$output" != *"wrote $COPY/deckhouse/fencing-softdog.yaml"* ]]
  run -0 "$COPY/render-manifests" --check
}

@test "a manifest whose step is gone is stale, and rendering removes it" {
  copy_steps
  rm "$COPY/001_fencing_softdog.sh.tpl"

  run -1 "$COPY/render-manifests" --check
  [[ "$output" == *"stale: $COPY/deckhouse/fencing-softdog.yaml (no step renders it any more)"* ]]

  run -0 "$COPY/render-manifests"
  [[ ! -e "$COPY/deckhouse/fencing-softdog.yaml" ]]
}

@test "rendering leaves files it did not generate alone" {
  copy_steps
  echo "kind: ConfigMap" >"$COPY/deckhouse/mine.yaml"

  run -0 "$COPY/render-manifests"
  run -0 "$COPY/render-manifests" --check

  [[ "$(cat "$COPY/deckhouse/mine.yaml")" == "kind: ConfigMap" ]]
}

@test "each manifest is a NodeGroupConfiguration whose content is its step, byte for byte" {
  # scripts/test installs Debian's python3-yaml when no python3 on PATH has PyYAML; a missing parser fails the test.
  local py=python3
  python3 -c 'import yaml' 2>/dev/null || py=/usr/bin/python3

  run -0 "$py" - "$STEPS_DIR" <<'PY'
import glob, os, sys, yaml
steps = sys.argv[1]
expected = {"fencing-softdog.sh": ("001_fencing_softdog.sh.tpl", 1),
            "fencing-disarm-before-disruption.sh": ("002_fencing_disarm_before_disruption.sh.tpl", 2),
            "fencing-rearm-after-disruption.sh": ("999_fencing_rearm_after_disruption.sh.tpl", 999)}
seen = set()
for path in sorted(glob.glob(os.path.join(steps, "deckhouse", "*.yaml"))):
    doc = yaml.safe_load(open(path))
    assert doc["apiVersion"] == "deckhouse.io/v1alpha1", path
    assert doc["kind"] == "NodeGroupConfiguration", path
    name = doc["metadata"]["name"]
    step, weight = expected[name]
    spec = doc["spec"]
    assert sorted(spec) == ["bundles", "content", "nodeGroups", "weight"], spec.keys()
    assert spec["weight"] == weight, (name, spec["weight"])
    assert spec["nodeGroups"] == ["*"] and spec["bundles"] == ["*"], path
    assert spec["content"] == open(os.path.join(steps, step)).read(), name + ": content differs from " + step
    seen.add(name)
assert seen == set(expected), seen
print("checked", len(seen))
PY
  [[ "$output" == "checked 3" ]]
}

@test "--node-groups sets spec.nodeGroups; names that are not NodeGroup names are refused" {
  copy_steps

  run -0 "$COPY/render-manifests" --node-groups worker,gpu-a --out "$BATS_TEST_TMPDIR/out"
  grep -qx '  nodeGroups: \["worker", "gpu-a"\]' "$BATS_TEST_TMPDIR/out/fencing-softdog.yaml"
  run -1 "$COPY/render-manifests" --out "$BATS_TEST_TMPDIR/out" --check
  run -0 "$COPY/render-manifests" --node-groups worker,gpu-a --out "$BATS_TEST_TMPDIR/out" --check

  run -1 "$COPY/render-manifests" --node-groups 'Worker' --out "$BATS_TEST_TMPDIR/out"
  [[ "$output" == *"'Worker' is not a NodeGroup name"* ]]
  run -1 "$COPY/render-manifests" --node-groups 'a,"b' --out "$BATS_TEST_TMPDIR/out"
  [[ "$output" == *"'\"b' is not a NodeGroup name"* ]]
}

@test "a step with a Go template action is refused: bashible would execute it" {
  copy_steps
  # shellcheck disable=SC2016
  echo 'echo "{{ .nodeGroup.name }}"' >>"$COPY/999_fencing_rearm_after_disruption.sh.tpl"

  run -1 "$COPY/render-manifests" --out "$BATS_TEST_TMPDIR/out"

  [[ "$output" == *"999_fencing_rearm_after_disruption.sh.tpl contains '{{'"* ]]
}

@test "unknown arguments print the usage" {
  run -2 "$RENDER" --frobnicate

  [[ "$output" == *"unknown argument '--frobnicate'"* ]]
  [[ "$output" == *"Usage: bashible-steps/render-manifests"* ]]
}
