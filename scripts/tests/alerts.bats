#!/usr/bin/env bats
# The chart's alerting rules (helm/fencing/files/alerts.yaml, embedded as they are in the PrometheusRule): promtool
# accepts them, their unit tests pass (helm/src/test/prometheus/alerts-test.yaml, among them a real partition
# timeline), the tests fail when a rule loses its signal, and every runbook_url points at an anchor of
# docs/runbook.md.

setup() {
  repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
  rules="$repo/helm/fencing/files/alerts.yaml"
  tests="$repo/helm/src/test/prometheus/alerts-test.yaml"
  work="$(mktemp -d)"
}

teardown() {
  rm -rf "$work"
}

# Copies the rules and their tests into $work with the same relative layout, so a rule can be changed there.
copy_rules() {
  mkdir -p "$work/helm/fencing/files" "$work/helm/src/test/prometheus"
  cp "$rules" "$work/helm/fencing/files/alerts.yaml"
  cp "$tests" "$work/helm/src/test/prometheus/"
}

@test "promtool accepts the chart's alerting rules" {
  run promtool check rules "$rules"
  [ "$status" -eq 0 ]
  [[ "$output" == *"SUCCESS: 6 rules found"* ]]
}

@test "the rules' unit tests pass, the partition timeline included" {
  run promtool test rules "$tests"
  [ "$status" -eq 0 ]
  [[ "$output" == *"SUCCESS"* ]]
}

@test "the partition test fails when the fenced-node alert loses the majority's view" {
  copy_rules
  sed -i 's|max by (namespace, group) (fencing_members{state="dead"}) > 0|vector(0) > 1|' \
    "$work/helm/fencing/files/alerts.yaml"
  [ "$(grep -c 'state="dead"' "$work/helm/fencing/files/alerts.yaml")" -eq 0 ]
  run promtool test rules "$work/helm/src/test/prometheus/alerts-test.yaml"
  [ "$status" -ne 0 ]
  [[ "$output" == *"partition of node-3"*"FencingNodeFenced"* ]]
}

@test "every alert links to an anchor that exists in docs/runbook.md" {
  mapfile -t urls < <(grep -o 'runbook_url: "[^"]*"' "$rules" | sed 's/^runbook_url: "//; s/"$//')
  [ "${#urls[@]}" -eq 6 ]
  for url in "${urls[@]}"; do
    [[ "$url" == "https://github.com/fencing/fencing/blob/main/docs/runbook.md#"* ]] || { echo "bad url $url"; false; }
    anchor="${url##*#}"
    grep -q "<a id=\"$anchor\"></a>" "$repo/docs/runbook.md" || { echo "no anchor $anchor in docs/runbook.md"; false; }
  done
}

@test "every alert has a severity, a summary and a runbook_url" {
  alerts=$(grep -c '^      - alert: ' "$rules")
  [ "$alerts" -eq 6 ]
  [ "$(grep -c '^          severity: \(critical\|warning\)$' "$rules")" -eq "$alerts" ]
  [ "$(grep -c '^          summary: ' "$rules")" -eq "$alerts" ]
  [ "$(grep -c '^          runbook_url: ' "$rules")" -eq "$alerts" ]
}
