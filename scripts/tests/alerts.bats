#!/usr/bin/env bats
# The chart's alerting rules (helm/fencing/files/alerts.yaml, embedded as they are in the PrometheusRule): promtool
# accepts them, their unit tests pass (helm/src/test/prometheus/alerts-test.yaml, among them a real partition
# timeline), the tests fail when a rule loses its signal, and every runbook_url points at an anchor of
# docs/runbook.md. The rules and the Grafana dashboard (helm/fencing/files/dashboard.json) use only metric names
# that the agent's and the controller's code register.

setup() {
  repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
  rules="$repo/helm/fencing/files/alerts.yaml"
  tests="$repo/helm/src/test/prometheus/alerts-test.yaml"
  dashboard="$repo/helm/fencing/files/dashboard.json"
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
  [[ "$output" == *"SUCCESS: 13 rules found"* ]]
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

@test "the not-armed test fails when the alert ignores disarms on purpose" {
  copy_rules
  sed -i '/^          unless on (namespace, pod)$/d; /^          fencing_disarm_reason{kind=~/d' \
    "$work/helm/fencing/files/alerts.yaml"
  [ "$(grep -c 'fencing_disarm_reason{kind=~' "$work/helm/fencing/files/alerts.yaml")" -eq 0 ]
  run promtool test rules "$work/helm/src/test/prometheus/alerts-test.yaml"
  [ "$status" -ne 0 ]
  [[ "$output" == *"not armed on purpose"*"agent-notify"* ]]
}

@test "the no-configuration test fails when the alerts count members as the agents see them" {
  copy_rules
  # The not-armed alert without its NO_CONFIG clause, the controller alert against the agents' expected count.
  sed -i '/kind="NO_CONFIG"/d; s|fencing_controller_group_expected_nodes|fencing_quorum_expected|' \
    "$work/helm/fencing/files/alerts.yaml"
  [ "$(grep -c 'NO_CONFIG\|group_expected_nodes' "$work/helm/fencing/files/alerts.yaml")" -eq 0 ]
  run promtool test rules "$work/helm/src/test/prometheus/alerts-test.yaml"
  [ "$status" -ne 0 ]
  [[ "$output" == *"agents that never got a configuration"*"FencingAgentNotArmed"* ]]
  [[ "$output" == *"agents that never got a configuration"*"FencingAgentCannotReachController"* ]]
}

@test "every alert links to an anchor that exists in docs/runbook.md" {
  mapfile -t urls < <(grep -o 'runbook_url: "[^"]*"' "$rules" | sed 's/^runbook_url: "//; s/"$//')
  [ "${#urls[@]}" -eq 13 ]
  for url in "${urls[@]}"; do
    [[ "$url" == "https://github.com/fencing/fencing/blob/main/docs/runbook.md#"* ]] || { echo "bad url $url"; false; }
    anchor="${url##*#}"
    grep -q "<a id=\"$anchor\"></a>" "$repo/docs/runbook.md" || { echo "no anchor $anchor in docs/runbook.md"; false; }
  done
}

@test "every alert has a severity, a summary and a runbook_url" {
  alerts=$(grep -c '^      - alert: ' "$rules")
  [ "$alerts" -eq 13 ]
  [ "$(grep -c '^          severity: \(critical\|warning\)$' "$rules")" -eq "$alerts" ]
  [ "$(grep -c '^          summary: ' "$rules")" -eq "$alerts" ]
  [ "$(grep -c '^          runbook_url: ' "$rules")" -eq "$alerts" ]
}

# Prometheus names of the meters registered in the agent's and the controller's main code: Micrometer's dotted
# names with dots as underscores, counters with _total. Only files that use Micrometer (config keys look alike).
registered_names() {
  grep -rl 'io.micrometer' "$repo/fencing-agent/src/main/java" "$repo/node-manager-controller/src/main/java" \
    | xargs grep -hE '"(fencing|memberlist)[._][a-z_.]+[a-z]"' \
    | while IFS= read -r line; do
        name=$(grep -oE '"(fencing|memberlist)[._][a-z_.]+[a-z]"' <<<"$line" | head -1 | tr -d '"' | tr . _)
        if [[ "$line" == *Counter* && "$name" != *_total ]]; then name="${name}_total"; fi
        echo "$name"
      done | sort -u
}

# fencing_* / memberlist_* names in a file's PromQL (label values such as state="dead" are not names).
used_names() {
  grep -oE '(fencing|memberlist)_[a-z_]+' "$1" | grep -vE '^fencing_(agent|group)$' | sort -u
}

@test "the rules and the dashboard use only metric names the code registers" {
  registered_names >"$work/registered"
  grep -qx fencing_quorum_held "$work/registered"
  grep -qx fencing_watchdog_feeds_total "$work/registered"
  grep -qx fencing_controller_group_armed_nodes "$work/registered"
  grep -qx memberlist_packets_sent_total "$work/registered"
  jq -r '.. | objects | select(has("expr")) | .expr' "$dashboard" >"$work/dashboard-exprs"
  [ "$(wc -l <"$work/dashboard-exprs")" -ge 20 ]
  grep -oE 'expr: .*|^          [a-z(].*' "$rules" >"$work/rule-exprs"
  for file in "$work/dashboard-exprs" "$work/rule-exprs"; do
    unknown=$(used_names "$file" | grep -vxF -f "$work/registered" || true)
    [ -z "$unknown" ] || { echo "unknown metric names in $file: $unknown"; false; }
  done
}

@test "the names check catches a metric the code does not register" {
  registered_names >"$work/registered"
  echo 'fencing_fencing_in_progress == 1' >"$work/old-name"
  run bash -c "grep -oE '(fencing|memberlist)_[a-z_]+' '$work/old-name' | grep -vxF -f '$work/registered'"
  [ "$output" = "fencing_fencing_in_progress" ]
}

@test "the dashboard is valid JSON with a group variable and a query in every panel" {
  jq -e '.uid == "fencing-group" and (.templating.list | map(.name) | index("group") != null)' "$dashboard"
  jq -e '[.panels[] | (.targets | length) > 0] | all' "$dashboard"
  # every query but the replica-wide leader count is filtered by the dashboard's group variable
  jq -e '[.panels[] | .targets[] | .expr | contains("=~\"$group\"") or contains("fencing_controller_leader")] | all' \
    "$dashboard"
}
