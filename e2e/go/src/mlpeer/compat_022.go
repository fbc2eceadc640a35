//go:build memberlist022

package main

import (
	"fmt"

	"github.com/hashicorp/memberlist"
)

// The parts of the peer that differ for Debian's memberlist 0.2.2 (GOPATH build with -tags memberlist022).

func memberlistVersion() string { return "v0.2.2" }

// labelHeaderOverhead is 0: 0.2.2 has no label header.
func labelHeaderOverhead(c *memberlist.Config) int { return 0 }

// applyLabelOptions refuses labels: 0.2.2 has neither Config.Label nor SkipInboundLabelCheck.
func applyLabelOptions(c *memberlist.Config, o options) error {
	if o.label != "" {
		return fmt.Errorf("--label %q: memberlist 0.2.2 has no gossip labels; run this peer without --label", o.label)
	}
	if o.skipInboundLabelCheck {
		return fmt.Errorf("--skip-inbound-label-check: memberlist 0.2.2 has no gossip labels")
	}
	return nil
}

// leaveState is "unknown": 0.2.2 never updates Node.State (the library writes a shadowing field).
func leaveState(n *memberlist.Node) string { return "unknown" }

// snapshot lists suspect members as alive and every departed member as dead: 0.2.2's public API lists only
// members that are not dead and cannot tell suspect from alive nor left from dead.
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
	return membersEvent{nowMillis(), "members", sorted(alive), []string{}, sorted(dead), []string{}}
}
