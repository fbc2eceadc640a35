// Command mlpeer is the Go memberlist reference peer for interop tests.
//
// It speaks the same command line and JSON-lines protocol as the Java node jar
// (memberlist/target/memberlist-<version>-node.jar, documented in memberlist/README.md)
// so that tests and benchmarks drive both kinds of node identically. It is built in
// GOPATH mode against Debian's hashicorp/memberlist 0.2.2 (-tags memberlist022), and in
// module mode against the versions pinned by go.mod (the latest release) and v054.mod
// (v0.5.4, Deckhouse's pin).
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/memberlist"
)

// output serialises JSON lines on stdout; one object per line, never interleaved.
type output struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (o *output) emit(v interface{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.enc.Encode(v); err != nil {
		log.Printf("[ERR] mlpeer: cannot write stdout: %v", err)
	}
}

func (o *output) fail(format string, args ...interface{}) {
	o.emit(errorEvent{nowMillis(), "error", fmt.Sprintf(format, args...)})
}

func nowMillis() int64 { return time.Now().UnixNano() / int64(time.Millisecond) }

type readyEvent struct {
	Ts         int64  `json:"ts"`
	Event      string `json:"event"`
	Node       string `json:"node"`
	Addr       string `json:"addr"`
	Memberlist string `json:"memberlist"`
}

type joinedEvent struct {
	Ts        int64  `json:"ts"`
	Event     string `json:"event"`
	Contacted int    `json:"contacted"`
}

type errorEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Error string `json:"error"`
}

type shutdownEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Node  string `json:"node"`
}

// peer is one running memberlist node and what it reports.
type peer struct {
	out          *output
	list         *memberlist.Memberlist
	name         string
	leaveTimeout time.Duration
	exitOnce     sync.Once
}

func main() {
	log.SetOutput(os.Stderr)
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "mlpeer: %v\n", err)
		os.Exit(2)
	}
	conf, err := buildConfig(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mlpeer: %v\n", err)
		os.Exit(2)
	}
	out := &output{enc: json.NewEncoder(os.Stdout)}
	track := &tracker{out: out, dead: map[string]bool{}}
	del := &delegate{out: out, meta: []byte(o.meta), state: []byte(o.state), gossipLimit: gossipLimit(conf)}
	conf.Events = track
	conf.Delegate = del

	transport, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{
		BindAddrs: []string{o.bind},
		BindPort:  o.port,
		Logger:    log.New(os.Stderr, "", log.LstdFlags),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "mlpeer: cannot bind %s:%d: %v\n", o.bind, o.port, err)
		os.Exit(1)
	}
	conf.Transport = transport
	if o.advertise != "" {
		conf.AdvertiseAddr = o.advertise
		conf.AdvertisePort = transport.GetAutoBindPort()
	}

	list, err := memberlist.Create(conf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mlpeer: cannot start memberlist on %s:%d: %v\n", o.bind, o.port, err)
		os.Exit(1)
	}
	p := &peer{out: out, list: list, name: o.name, leaveTimeout: o.leaveTimeout}
	del.peer = p
	local := list.LocalNode()
	out.emit(readyEvent{nowMillis(), "ready", local.Name, net.JoinHostPort(local.Addr.String(), strconv.Itoa(int(local.Port))),
		memberlistVersion()})

	if o.join != "" {
		go p.joinUntilContacted(strings.Split(o.join, ","))
	}
	go del.readCommands(os.Stdin)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			out.emit(track.snapshot(list))
		case <-signals:
			p.leaveAndExit()
		}
	}
}

// joinUntilContacted retries the join every second until a seed answers, as the Java node does.
func (p *peer) joinUntilContacted(seeds []string) {
	for {
		n, err := p.list.Join(seeds)
		if err == nil || n > 0 {
			p.out.emit(joinedEvent{nowMillis(), "joined", n})
			return
		}
		p.out.fail("join %v: %v", seeds, err)
		time.Sleep(time.Second)
	}
}

// leaveAndExit is the graceful path of SIGTERM and of the stdin leave command.
func (p *peer) leaveAndExit() {
	p.exitOnce.Do(func() {
		if err := p.list.Leave(p.leaveTimeout); err != nil {
			log.Printf("[WARN] mlpeer: leave: %v", err)
		}
		if err := p.list.Shutdown(); err != nil {
			log.Printf("[WARN] mlpeer: shutdown: %v", err)
		}
		p.out.emit(shutdownEvent{nowMillis(), "shutdown", p.name})
		os.Exit(0)
	})
}
