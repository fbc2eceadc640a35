package main

import (
	"fmt"
	"sort"
	"sync"

	"github.com/hashicorp/memberlist"
)

type nodeEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Node  string `json:"node"`
	Addr  string `json:"addr"`
	Meta  string `json:"meta"`
	Vsn   string `json:"vsn"`
}

// vsn is the node's protocol versions as this library parsed them: "PMin,PMax,PCur,DMin,DMax,DCur".
func vsn(n *memberlist.Node) string {
	return fmt.Sprintf("%d,%d,%d,%d,%d,%d", n.PMin, n.PMax, n.PCur, n.DMin, n.DMax, n.DCur)
}

// leaveEvent has no meta but the state, as in the Java node's output.
type leaveEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Node  string `json:"node"`
	Addr  string `json:"addr"`
	State string `json:"state"`
}

type membersEvent struct {
	Ts      int64    `json:"ts"`
	Event   string   `json:"event"`
	Alive   []string `json:"alive"`
	Suspect []string `json:"suspect"`
	Dead    []string `json:"dead"`
	Left    []string `json:"left"`
}

// tracker turns EventDelegate callbacks into lines and remembers departed nodes (for the 0.2.2 build, whose
// members snapshot cannot see them; see compat_022.go and compat_modern.go for the per-version parts).
type tracker struct {
	out  *output
	mu   sync.Mutex
	dead map[string]bool
}

func (t *tracker) NotifyJoin(n *memberlist.Node) {
	t.mu.Lock()
	delete(t.dead, n.Name)
	t.mu.Unlock()
	t.out.emit(nodeEvent{nowMillis(), "join", n.Name, n.Address(), string(n.Meta), vsn(n)})
}

func (t *tracker) NotifyLeave(n *memberlist.Node) {
	t.mu.Lock()
	t.dead[n.Name] = true
	t.mu.Unlock()
	t.out.emit(leaveEvent{nowMillis(), "leave", n.Name, n.Address(), leaveState(n)})
}

func (t *tracker) NotifyUpdate(n *memberlist.Node) {
	t.out.emit(nodeEvent{nowMillis(), "update", n.Name, n.Address(), string(n.Meta), vsn(n)})
}

func sorted(names []string) []string {
	sort.Strings(names)
	return names
}
