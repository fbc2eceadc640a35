package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io/ioutil"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// printer serialises output lines from memberlist's goroutines.
type printer struct{ mu sync.Mutex }

func (p *printer) line(format string, args ...interface{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Printf(format+"\n", args...)
}

type serveDelegate struct{ out *printer }

func (d *serveDelegate) NodeMeta(limit int) []byte { return []byte("go-meta") }
func (d *serveDelegate) NotifyMsg(b []byte)         { d.out.line("msg %s", hex.EncodeToString(b)) }
func (d *serveDelegate) GetBroadcasts(overhead, limit int) [][]byte {
	return nil
}
func (d *serveDelegate) LocalState(join bool) []byte { return []byte("go-state") }
func (d *serveDelegate) MergeRemoteState(buf []byte, join bool) {
	d.out.line("state %s %v", hex.EncodeToString(buf), join)
}

type serveEvents struct{ out *printer }

func (e *serveEvents) NotifyJoin(n *memberlist.Node) {
	e.out.line("join %s %s:%d %s", n.Name, n.Addr, n.Port, hex.EncodeToString(n.Meta))
}
func (e *serveEvents) NotifyLeave(n *memberlist.Node)  { e.out.line("leave %s", n.Name) }
func (e *serveEvents) NotifyUpdate(n *memberlist.Node) { e.out.line("update %s", n.Name) }

// serve runs one real memberlist node ("go1") on loopback UDP+TCP with Debian's NetTransport, printing
// "ready PORT", then join/leave/update events, delegate messages and merged remote state. Reading "members" on
// stdin prints "members name:state…"; EOF shuts the node down.
func serve(keyHex string) {
	out := &printer{}
	c := memberlist.DefaultLocalConfig()
	c.Name = "go1"
	c.BindAddr = "127.0.0.1"
	c.BindPort = 0
	c.ProbeInterval = 300 * time.Millisecond
	c.ProbeTimeout = 200 * time.Millisecond
	c.GossipInterval = 50 * time.Millisecond
	c.Delegate = &serveDelegate{out: out}
	c.Events = &serveEvents{out: out}
	c.LogOutput = ioutil.Discard
	if os.Getenv("GOLDEN_LOG") != "" {
		c.LogOutput = os.Stderr
	}
	if keyHex != "" {
		key, err := hex.DecodeString(keyHex)
		if err != nil {
			panic(err)
		}
		c.SecretKey = key
	}
	m, err := memberlist.Create(c)
	if err != nil {
		panic(err)
	}
	out.line("ready %d", m.LocalNode().Port)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if strings.TrimSpace(in.Text()) == "members" {
			var parts []string
			for _, n := range m.Members() {
				parts = append(parts, fmt.Sprintf("%s:%d", n.Name, n.State))
			}
			out.line("members %s", strings.Join(parts, " "))
		}
	}
	_ = m.Shutdown()
}
