#!/usr/bin/env bats
# scripts/kubectl-fencing: the kubectl plugin, against a fake kubectl on PATH that serves controller replicas'
# /debug/groups answers from files ($work/raw/<pod>) and logs every call.

setup() {
  repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
  work="$(mktemp -d)"
  mkdir -p "$work/bin" "$work/raw"
  cat >"$work/bin/kubectl" <<'FAKE'
#!/usr/bin/env bash
echo "$*" >>"$FAKE_DIR/calls"
while [[ "$1" == --context=* || "$1" == --kubeconfig=* ]]; do shift; done
if [ "$1 $2" = "get pods" ]; then
  cat "$FAKE_DIR/pods"
  exit 0
fi
if [ "$1 $2" = "get --raw" ]; then
  pod=${3#*/pods/}
  pod=${pod%%:*}
  if [ -f "$FAKE_DIR/raw/$pod" ]; then
    cat "$FAKE_DIR/raw/$pod"
    exit 0
  fi
  echo "Error from server (NotFound): the server could not find the requested resource" >&2
  exit 1
fi
echo "fake kubectl: unexpected $*" >&2
exit 3
FAKE
  chmod +x "$work/bin/kubectl"
  export PATH="$work/bin:$PATH" FAKE_DIR="$work"
  printf 'ctl-a\nctl-b\n' >"$work/pods"
}

teardown() {
  rm -rf "$work"
}

# A 2+1 partition of group workers: n3 is cut off and disarmed; n1 last heard 4 s before the view was built.
view() {
  cat <<JSON
{"group":"workers","leader":$1,"generatedAt":"2026-11-22T10:00:10.250Z","staleAfter":30,"quorumSize":2,
 "members":["n1","n2","n3"],
 "nodes":[
  {"name":"n1","reporting":true,"reportAge":0,"armed":true,"quorumHeld":true,"confirmed":2,
   "lastContact":"2026-11-22T10:00:06.100Z","heard":"=+-","notConfirmed":["n3"]},
  {"name":"n2","reporting":true,"reportAge":1,"armed":true,"quorumHeld":true,"confirmed":2,
   "lastContact":"2026-11-22T10:00:10Z","heard":"+=-","notConfirmed":["n3"]},
  {"name":"n3","reporting":false,"reportAge":45,"armed":null,"quorumHeld":null,"confirmed":null,
   "lastContact":null,"heard":"??=","notConfirmed":[]}]}
JSON
}

@test "the leader's view is printed as a table and a heard matrix" {
  view false >"$work/raw/ctl-a"
  view true >"$work/raw/ctl-b"
  run "$repo/scripts/kubectl-fencing" view workers -n fencing
  [ "$status" -eq 0 ]
  [[ "$output" == *"group workers  from ctl-b (leader)  quorum 2 of 3"* ]]
  [[ "$output" != *"no replica says it leads"* ]]
  grep -qx 'n1   yes       yes   held   2         4s ago       n3' <<<"$output"
  grep -qx 'n3   no        -     -      -         never        ?' <<<"$output"
  grep -qx '1 n1 = + -' <<<"$output"
  grep -qx '3 n3 ? ? =' <<<"$output"
  grep -q 'get pods -n fencing -l app.kubernetes.io/name=node-manager-controller,app.kubernetes.io/component=controller' "$work/calls"
  grep -q 'get --raw /api/v1/namespaces/fencing/pods/ctl-b:8080/proxy/debug/groups/workers' "$work/calls"
}

@test "the group status the leader computed is printed above the table: conditions, timings, fenced nodes" {
  view true | jq -c '.status = {observedGeneration: 3, expected: 3, heard: 2, armed: 2,
    conditions: [{type: "Ready", status: "True", reason: "AgentsReporting", message: "2 of 3 report"},
                 {type: "QuorumHealthy", status: "True", reason: "QuorumHeld", message: "held by n1, n2"}],
    timings: {tStop: "3.1s", safeToAssumeFencedDelay: "74.1s"},
    fencedNodes: [{name: "n3", fencedAt: "2026-11-22T10:00:00Z", reason: "unheard"}]}' >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view workers -n fencing
  [ "$status" -eq 0 ]
  grep -qx 'condition Ready=True AgentsReporting: 2 of 3 report' <<<"$output"
  grep -qx 'condition QuorumHealthy=True QuorumHeld: held by n1, n2' <<<"$output"
  grep -qx 'timings tStop 3.1s safeToAssumeFenced 74.1s' <<<"$output"
  grep -qx 'fenced n3 since 2026-11-22T10:00:00Z: unheard' <<<"$output"
  grep -qx 'n1   yes       yes   held   2         4s ago       n3' <<<"$output"
}

@test "nodes the leader holds back from being counted fenced are printed with the reason" {
  view true | jq -c '.heldBack = {n3: "it may hold quorum over the member set n2, n3, n4 it may still run: only 1 of its 3 report not hearing it"}' >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view workers -n fencing
  [ "$status" -eq 0 ]
  grep -qx 'held back n3: it may hold quorum over the member set n2, n3, n4 it may still run: only 1 of its 3 report not hearing it' <<<"$output"
  view true | jq -c 'del(.heldBack)' >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view workers -n fencing
  [ "$status" -eq 0 ]
  [[ "$output" != *"held back"* ]]
}

@test "a view without a status (none computed yet) prints no status lines" {
  view true | jq -c '.status = null' >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view workers -n fencing
  [ "$status" -eq 0 ]
  [[ "$output" != *"condition "* ]]
  [[ "$output" != *"timings "* ]]
}

@test "a follower's view is used with a warning when no replica leads" {
  view false >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view workers -n fencing --port 9000
  [ "$status" -eq 0 ]
  [[ "$output" == *"no replica says it leads; ctl-a (follower) knows only the agents connected to it"* ]]
  [[ "$output" == *"from ctl-a (follower)"* ]]
  grep -q 'pods/ctl-a:9000/proxy' "$work/calls"
}

@test "-o json prints the controller's answer as it is" {
  view true >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view workers -o json
  [ "$status" -eq 0 ]
  [ "$(jq -r '.nodes[2].heard' <<<"$output")" = "??=" ]
  grep -q 'get pods -n d8-fencing' "$work/calls"
}

@test "no replica answering is an error naming each replica's failure" {
  run "$repo/scripts/kubectl-fencing" view nosuch -n fencing
  [ "$status" -eq 1 ]
  [[ "$output" == *"no controller replica answered for group nosuch"* ]]
  [[ "$output" == *"ctl-a: Error from server (NotFound)"* ]]
  [[ "$output" == *"ctl-b: Error from server (NotFound)"* ]]
}

@test "no controller pod is a clear error" {
  : >"$work/pods"
  run "$repo/scripts/kubectl-fencing" view workers -n elsewhere
  [ "$status" -eq 1 ]
  [[ "$output" == *"no controller pod in namespace elsewhere"* ]]
}

@test "bad arguments are refused before kubectl is called" {
  run "$repo/scripts/kubectl-fencing" view Bad_Name
  [ "$status" -eq 1 ]
  [[ "$output" == *"not a NodeGroup name: Bad_Name"* ]]
  run "$repo/scripts/kubectl-fencing" view workers --frobnicate
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown argument --frobnicate"* ]]
  run "$repo/scripts/kubectl-fencing" view workers -o yaml
  [ "$status" -eq 1 ]
  run "$repo/scripts/kubectl-fencing" status
  [ "$status" -eq 2 ]
  [ ! -e "$work/calls" ]
}

@test "above 60 members the matrix is left out and long NOT-CONFIRMED lists are abbreviated" {
  jq -n '{group:"big",leader:true,generatedAt:"2026-11-22T10:00:00Z",staleAfter:30,quorumSize:33,
          members:[range(0;64) | "n\(.)"],
          nodes:[range(0;64) | {name:"n\(.)",reporting:true,reportAge:0,armed:true,quorumHeld:false,confirmed:1,
                 lastContact:"2026-11-22T10:00:00Z",heard:"",notConfirmed:[range(0;63) | "p\(.)"]}]}' \
    >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view big
  [ "$status" -eq 0 ]
  [[ "$output" != *"heard matrix"* ]]
  [[ "$output" == *"p0,p1,p2,p3,p4,p5,p6,p7,p8,p9,+53"* ]]
}

@test "--context and --kubeconfig reach every kubectl call" {
  view true >"$work/raw/ctl-a"
  run "$repo/scripts/kubectl-fencing" view workers --context lab --kubeconfig=/tmp/kc
  [ "$status" -eq 0 ]
  [ "$(grep -c '^--context=lab --kubeconfig=/tmp/kc get ' "$work/calls")" -eq 2 ]
}

@test "--help prints the usage" {
  run "$repo/scripts/kubectl-fencing" --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"Usage: kubectl fencing view GROUP"* ]]
}
