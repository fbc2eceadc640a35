//go:build !memberlist022

package main

import (
	"reflect"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/hashicorp/memberlist"
)

// The parts of the peer for memberlist >= 0.3 (module builds pinned by go.mod / v054.mod).
//
// memberlist keeps a node's real state in its unexported nodeState (which embeds Node and shadows Node.State; the
// exported Node.State is never updated) and lists only alive and suspect members in Members(). To report suspect,
// dead and left members as the Java node does, this peer reads the node table through reflection, under the
// library's own nodeLock. That is a test harness's liberty: the layout (nodes []*nodeState, nodeLock, nodeState{Node;
// Incarnation; State; StateChange}) is the same in v0.3 to v0.7, and a change makes the peer fail at start.

func memberlistVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/hashicorp/memberlist" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// labelHeaderOverhead is the size of the label header memberlist puts before every packet (none without a label).
func labelHeaderOverhead(c *memberlist.Config) int {
	if c.Label == "" {
		return 0
	}
	return 2 + len(c.Label)
}

func applyLabelOptions(c *memberlist.Config, o options) error {
	c.Label = o.label
	c.SkipInboundLabelCheck = o.skipInboundLabelCheck
	return nil
}

// nodeStateType is memberlist's unexported nodeState, found through the type of Memberlist.nodes.
var nodeStateType = func() reflect.Type {
	field, ok := reflect.TypeOf(memberlist.Memberlist{}).FieldByName("nodes")
	if !ok || field.Type.Kind() != reflect.Slice || field.Type.Elem().Kind() != reflect.Ptr {
		panic("mlpeer: memberlist.Memberlist has no nodes []*nodeState field; update compat_modern.go")
	}
	t := field.Type.Elem().Elem()
	if s, ok := t.FieldByName("State"); !ok || len(s.Index) != 1 || s.Type.Kind() != reflect.Int {
		panic("mlpeer: memberlist nodeState has no State field; update compat_modern.go")
	}
	if n, ok := t.FieldByName("Node"); !ok || n.Offset != 0 {
		panic("mlpeer: memberlist nodeState does not start with Node; update compat_modern.go")
	}
	return t
}()

func stateName(state int64) string {
	switch memberlist.NodeStateType(state) {
	case memberlist.StateAlive:
		return "alive"
	case memberlist.StateSuspect:
		return "suspect"
	case memberlist.StateDead:
		return "dead"
	case memberlist.StateLeft:
		return "left"
	}
	return "unknown"
}

// leaveState reads the real state of a node memberlist handed to NotifyLeave: the pointer is &nodeState.Node, and
// Node is nodeState's first field, so the pointer is the nodeState. The callback runs under nodeLock, already set.
func leaveState(n *memberlist.Node) string {
	return stateName(reflect.NewAt(nodeStateType, unsafe.Pointer(n)).Elem().FieldByName("State").Int())
}

func (t *tracker) snapshot(list *memberlist.Memberlist) membersEvent {
	m := reflect.ValueOf(list).Elem()
	lock := (*sync.RWMutex)(unsafe.Pointer(m.FieldByName("nodeLock").UnsafeAddr()))
	nodes := m.FieldByName("nodes")
	byState := map[string][]string{"alive": {}, "suspect": {}, "dead": {}, "left": {}}
	lock.RLock()
	for i := 0; i < nodes.Len(); i++ {
		ns := nodes.Index(i).Elem()
		name := ns.FieldByName("Node").FieldByName("Name").String()
		state := stateName(ns.FieldByName("State").Int())
		byState[state] = append(byState[state], name)
	}
	lock.RUnlock()
	return membersEvent{nowMillis(), "members", sorted(byState["alive"]), sorted(byState["suspect"]),
		sorted(byState["dead"]), sorted(byState["left"])}
}
