package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/memberlist"
)

// userEvent reports a user message received from any member.
type userEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Msg   string `json:"msg"`
}

// stateEvent reports remote state merged by a push/pull exchange.
type stateEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	State string `json:"state"`
	Join  bool   `json:"join"`
}

type sentEvent struct {
	Ts       int64  `json:"ts"`
	Event    string `json:"event"`
	Node     string `json:"node"`
	Reliable bool   `json:"reliable"`
}

// command is one stdin line asking the peer to send a user message.
type command struct {
	Send     string `json:"send"`
	Msg      string `json:"msg"`
	Reliable bool   `json:"reliable"`
}

// delegate carries user messages and the push/pull local state.
type delegate struct {
	out   *output
	list  *memberlist.Memberlist
	mu    sync.Mutex
	state []byte
}

func (d *delegate) NodeMeta(limit int) []byte { return nil }

func (d *delegate) NotifyMsg(msg []byte) {
	d.out.emit(userEvent{nowMillis(), "user", string(msg)})
}

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }

func (d *delegate) LocalState(join bool) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state
}

func (d *delegate) MergeRemoteState(buf []byte, join bool) {
	d.out.emit(stateEvent{nowMillis(), "state", string(buf), join})
}

// readCommands executes stdin commands until stdin closes; bad lines are reported, never fatal.
func (d *delegate) readCommands(in io.Reader) {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		var c command
		if err := json.Unmarshal(line, &c); err != nil {
			d.out.emit(errorEvent{nowMillis(), "error", fmt.Sprintf("stdin line is not a command object: %v", err)})
			continue
		}
		if err := d.send(c); err != nil {
			d.out.emit(errorEvent{nowMillis(), "error", err.Error()})
		}
	}
}

func (d *delegate) send(c command) error {
	if c.Send == "" {
		return fmt.Errorf(`stdin command needs "send":"<node name>"`)
	}
	var target *memberlist.Node
	for _, n := range d.list.Members() {
		if n.Name == c.Send {
			target = n
		}
	}
	if target == nil {
		return fmt.Errorf("send to %q: not a live member", c.Send)
	}
	var err error
	if c.Reliable {
		err = d.list.SendReliable(target, []byte(c.Msg))
	} else {
		err = d.list.SendBestEffort(target, []byte(c.Msg))
	}
	if err != nil {
		return fmt.Errorf("send to %q: %v", c.Send, err)
	}
	d.out.emit(sentEvent{nowMillis(), "sent", c.Send, c.Reliable})
	return nil
}
