package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

type userEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Msg   string `json:"msg"`
}

type stateEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Join  bool   `json:"join"`
	State string `json:"state"`
}

type sentEvent struct {
	Ts       int64  `json:"ts"`
	Event    string `json:"event"`
	To       string `json:"to"`
	Reliable bool   `json:"reliable"`
}

// command is one stdin line; exactly one of its verbs is set.
type command struct {
	Send     *string `json:"send"`
	SendTo   *string `json:"sendto"`
	Msg      string  `json:"msg"`
	Reliable bool    `json:"reliable"`
	Meta     *string `json:"meta"`
	State    *string `json:"state"`
	Leave    bool    `json:"leave"`
	// Broadcasts queues that many distinct 2-character user broadcasts ("00", "01", … in base 36) for
	// GetBroadcasts: small enough that one gossip packet holds more than 255 of them.
	Broadcasts int `json:"broadcasts"`
}

// delegate carries node metadata, user messages and the push/pull local state.
type delegate struct {
	out   *output
	peer  *peer
	mu    sync.Mutex
	meta  []byte
	state []byte
	queue [][]byte // user broadcasts not yet handed to memberlist
	// gossipLimit is the limit memberlist passes GetBroadcasts in a gossip round that carries no system broadcasts
	// (see gossipLimit); a smaller limit is a piggyback on a ping or an ack, or a round whose system broadcasts
	// took room.
	gossipLimit int
}

func (d *delegate) NodeMeta(limit int) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.meta) > limit {
		return d.meta[:limit]
	}
	return d.meta
}

func (d *delegate) NotifyMsg(msg []byte) {
	d.out.emit(userEvent{nowMillis(), "user", string(msg)})
}

// GetBroadcasts hands out queued user broadcasts, each once, as many as fit in limit, and only to a gossip round
// with nothing else in it. memberlist's sendMsg (Debian's 0.2.2 through v0.7.0) piggybacks broadcasts on a ping or
// an ack with makeCompoundMessage, which writes the part count as one byte and does not split: a piggyback of more
// than 255 parts (only tiny messages like these fit that many) wraps the count, and every receiver, Go or Java,
// drops the misaligned parts. Whether a ping, an ack or a gossip round drained the queue first was a race, so the
// compound check failed now and then; gossip rounds split at 255 parts (makeCompoundMessages, since 0.3).
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if limit < d.gossipLimit {
		return nil
	}
	var out [][]byte
	used := 0
	for len(d.queue) > 0 && used+overhead+len(d.queue[0]) <= limit {
		used += overhead + len(d.queue[0])
		out = append(out, d.queue[0])
		d.queue = d.queue[1:]
	}
	return out
}

func (d *delegate) LocalState(join bool) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state
}

func (d *delegate) MergeRemoteState(buf []byte, join bool) {
	d.out.emit(stateEvent{nowMillis(), "state", join, string(buf)})
}

// readCommands executes stdin commands until stdin closes; bad lines are reported, never fatal.
func (d *delegate) readCommands(in io.Reader) {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		var c command
		if err := json.Unmarshal(line, &c); err != nil {
			d.out.fail("stdin line is not a command object: %v", err)
			continue
		}
		if err := d.execute(c); err != nil {
			d.out.fail("%v", err)
		}
	}
}

func (d *delegate) execute(c command) error {
	switch {
	case c.Send != nil:
		return d.sendToMember(*c.Send, c.Msg, c.Reliable)
	case c.SendTo != nil:
		addr, err := net.ResolveUDPAddr("udp", *c.SendTo)
		if err != nil {
			return fmt.Errorf("sendto %q: %v", *c.SendTo, err)
		}
		if err := d.peer.list.SendTo(addr, []byte(c.Msg)); err != nil {
			return fmt.Errorf("sendto %q: %v", *c.SendTo, err)
		}
		d.out.emit(sentEvent{nowMillis(), "sent", *c.SendTo, false})
		return nil
	case c.Meta != nil:
		if len(*c.Meta) > memberlist.MetaMaxSize {
			return fmt.Errorf("meta is %d bytes; at most %d", len(*c.Meta), memberlist.MetaMaxSize)
		}
		d.mu.Lock()
		d.meta = []byte(*c.Meta)
		d.mu.Unlock()
		return d.peer.list.UpdateNode(5 * time.Second)
	case c.State != nil:
		d.mu.Lock()
		d.state = []byte(*c.State)
		d.mu.Unlock()
		return nil
	case c.Broadcasts > 0:
		if c.Broadcasts > 36*36 {
			return fmt.Errorf("broadcasts %d: at most %d distinct 2-character messages", c.Broadcasts, 36*36)
		}
		d.mu.Lock()
		for i := 0; i < c.Broadcasts; i++ {
			text := strconv.FormatInt(int64(i), 36)
			d.queue = append(d.queue, []byte(strings.Repeat("0", 2-len(text))+text))
		}
		d.mu.Unlock()
		return nil
	case c.Leave:
		d.peer.leaveAndExit()
		return nil
	default:
		return fmt.Errorf(`unknown stdin command; use "send", "sendto", "meta", "state", "broadcasts" or "leave"`)
	}
}

func (d *delegate) sendToMember(name, msg string, reliable bool) error {
	var target *memberlist.Node
	for _, n := range d.peer.list.Members() {
		if n.Name == name {
			target = n
		}
	}
	if target == nil {
		return fmt.Errorf("send to %q: not a live member", name)
	}
	var err error
	if reliable {
		err = d.peer.list.SendReliable(target, []byte(msg))
	} else {
		err = d.peer.list.SendBestEffort(target, []byte(msg))
	}
	if err != nil {
		return fmt.Errorf("send to %q: %v", name, err)
	}
	d.out.emit(sentEvent{nowMillis(), "sent", name, reliable})
	return nil
}

// gossipLimit is what memberlist's gossip round offers the delegate when no system broadcast is queued: the UDP
// buffer less the compound header (2 bytes), the label header and, with a keyring, the encryption overhead of
// encryption version 1 (29 bytes; protocol versions above 1, the only ones this peer runs).
func gossipLimit(c *memberlist.Config) int {
	limit := c.UDPBufferSize - 2 - labelHeaderOverhead(c)
	if c.Keyring != nil && len(c.Keyring.GetKeys()) > 0 {
		limit -= 29
	}
	return limit
}
