#!/usr/bin/env bats
# scripts/bench regenerates bench/REPORT.md but keeps the recorded part (scenario and hand measurements).

setup() {
  tree="$BATS_TEST_TMPDIR/tree"
  mkdir -p "$tree/scripts" "$tree/bench"
  cp "$BATS_TEST_DIRNAME/../bench" "$tree/scripts/bench"
  # a Maven wrapper that builds nothing and prints one line per benchmark
  cat > "$tree/mvnw" <<'STUB'
#!/usr/bin/env bash
for arg in "$@"; do
  case "$arg" in -Dexec.mainClass=*) echo "figure from ${arg#-Dexec.mainClass=}" ;; esac
done
STUB
  chmod +x "$tree/mvnw"
}

@test "bench keeps the recorded part of the report and regenerates the rest" {
  [ "$(id -u)" -eq 0 ] || skip "scripts/bench runs as root only"
  cat > "$tree/bench/REPORT.md" <<'EOF2'
# Benchmark report

## memberlist: simulator at scale

stale generated figure

<!-- recorded below: kept -->

# Recorded measurements

## disk arbiter
poison pill to last feed: 1.2 s
EOF2
  run "$tree/scripts/bench" quick
  [ "$status" -eq 0 ]
  run cat "$tree/bench/REPORT.md"
  [[ "$output" == *"figure from dev.fencing.memberlist.sim.SimulatorBenchmark"* ]]
  [[ "$output" != *"stale generated figure"* ]]
  [[ "$output" == *"poison pill to last feed: 1.2 s"* ]]
  # the recorded part comes after every regenerated section, exactly once
  [ "$(grep -c '^<!-- recorded below' "$tree/bench/REPORT.md")" -eq 1 ]
  last_generated=$(grep -n '^## node-manager-controller: config fan-out' "$tree/bench/REPORT.md" | cut -d: -f1)
  marker=$(grep -n '^<!-- recorded below' "$tree/bench/REPORT.md" | cut -d: -f1)
  [ "$marker" -gt "$last_generated" ]
}

@test "bench writes a report without a recorded part when there was none" {
  [ "$(id -u)" -eq 0 ] || skip "scripts/bench runs as root only"
  run "$tree/scripts/bench" quick
  [ "$status" -eq 0 ]
  [ "$(grep -c '^<!-- recorded below' "$tree/bench/REPORT.md")" -eq 0 ]
  grep -q '^## fencing-agent: idle footprint' "$tree/bench/REPORT.md"
}
