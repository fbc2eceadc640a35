package main

import (
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

// tracker turns EventDelegate callbacks into lines and remembers departed nodes.
//
// memberlist 0.2.2's public API lists only members that are not dead, and it never
// updates Node.State (the library writes a shadowing field), so this peer cannot tell
// suspect from alive nor left from dead: suspect members are listed as alive, every
// departed member is listed as dead, and leave lines carry "state":"unknown".
type tracker struct {
	out  *output
	mu   sync.Mutex
	dead map[string]bool
}

func (t *tracker) NotifyJoin(n *memberlist.Node) {
	t.mu.Lock()
	delete(t.dead, n.Name)
	t.mu.Unlock()
	t.out.emit(nodeEvent{nowMillis(), "join", n.Name, n.Address(), string(n.Meta)})
}

func (t *tracker) NotifyLeave(n *memberlist.Node) {
	t.mu.Lock()
	t.dead[n.Name] = true
	t.mu.Unlock()
	t.out.emit(leaveEvent{nowMillis(), "leave", n.Name, n.Address(), "unknown"})
}

func (t *tracker) NotifyUpdate(n *memberlist.Node) {
	t.out.emit(nodeEvent{nowMillis(), "update", n.Name, n.Address(), string(n.Meta)})
}

func (t *tracker) snapshot(list *memberlist.Memberlist) membersEvent {
	alive := []string{}
	present := map[string]bool{}
	for _, n := range list.Members() {
		alive = append(alive, n.Name)
		present[n.Name] = true
	}
	t.mu.Lock()
	dead := []string{}
	for name := range t.dead {
		if !present[name] {
			dead = append(dead, name)
		}
	}
	t.mu.Unlock()
	sort.Strings(alive)
	sort.Strings(dead)
	return membersEvent{nowMillis(), "members", alive, []string{}, dead, []string{}}
}
