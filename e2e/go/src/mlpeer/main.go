// Command mlpeer is the Go memberlist reference peer for interop tests.
//
// It speaks the same command line and JSON-lines protocol as the Java node jar
// (memberlist/target/memberlist-<version>-node.jar) so that tests and benchmarks
// can drive both kinds of node identically. It is built in GOPATH mode against
// Debian's hashicorp/memberlist 0.2.2 package, which it uses as a library only.
package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"sort"
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

func nowMillis() int64 { return time.Now().UnixNano() / int64(time.Millisecond) }

// nodeEvent is a ready|join|leave|update line. Field order is the documented order.
type nodeEvent struct {
	Ts    int64  `json:"ts"`
	Event string `json:"event"`
	Node  string `json:"node"`
	Addr  string `json:"addr"`
}

type membersEvent struct {
	Ts      int64    `json:"ts"`
	Event   string   `json:"event"`
	Alive   []string `json:"alive"`
	Suspect []string `json:"suspect"`
	Dead    []string `json:"dead"`
}

type errorEvent struct {
	Ts      int64  `json:"ts"`
	Event   string `json:"event"`
	Message string `json:"message"`
}

// tracker remembers nodes reported dead or left: memberlist 0.2.2's public API
// exposes only the non-dead members, and it never updates Node.State, so suspect
// nodes are indistinguishable from alive ones and are listed as alive.
type tracker struct {
	out  *output
	mu   sync.Mutex
	dead map[string]bool
}

func (t *tracker) NotifyJoin(n *memberlist.Node) {
	t.mu.Lock()
	delete(t.dead, n.Name)
	t.mu.Unlock()
	t.out.emit(nodeEvent{nowMillis(), "join", n.Name, n.Address()})
}

func (t *tracker) NotifyLeave(n *memberlist.Node) {
	t.mu.Lock()
	t.dead[n.Name] = true
	t.mu.Unlock()
	t.out.emit(nodeEvent{nowMillis(), "leave", n.Name, n.Address()})
}

func (t *tracker) NotifyUpdate(n *memberlist.Node) {
	t.out.emit(nodeEvent{nowMillis(), "update", n.Name, n.Address()})
}

func (t *tracker) snapshot(list *memberlist.Memberlist) membersEvent {
	alive := []string{}
	for _, n := range list.Members() {
		alive = append(alive, n.Name)
	}
	t.mu.Lock()
	dead := []string{}
	for name := range t.dead {
		dead = append(dead, name)
	}
	t.mu.Unlock()
	sort.Strings(alive)
	sort.Strings(dead)
	return membersEvent{nowMillis(), "members", alive, []string{}, dead}
}

type options struct {
	name, bind, join, key, label, config, state string
	port                                        int
	probeInterval, probeTimeout, gossipInterval time.Duration
	pushPullInterval, leaveTimeout              time.Duration
	suspicionMult, retransmitMult               int
	indirectChecks, gossipNodes                 int
	noCompression                               bool
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("mlpeer", flag.ContinueOnError)
	fs.StringVar(&o.name, "name", "", "node name (required)")
	fs.StringVar(&o.bind, "bind", "127.0.0.1", "address to bind UDP and TCP to")
	fs.IntVar(&o.port, "port", 7946, "port to bind UDP and TCP to")
	fs.StringVar(&o.join, "join", "", "comma-separated HOST:PORT seeds to join")
	fs.StringVar(&o.key, "key", "", "base64 AES key (16, 24 or 32 bytes) to encrypt gossip")
	fs.StringVar(&o.label, "label", "", "gossip label (not supported by memberlist 0.2.2)")
	fs.StringVar(&o.config, "config", "lan", "base configuration: lan, wan or local")
	fs.StringVar(&o.state, "state", "", "local state text exchanged in push/pull")
	fs.DurationVar(&o.probeInterval, "probe-interval", 0, "override ProbeInterval")
	fs.DurationVar(&o.probeTimeout, "probe-timeout", 0, "override ProbeTimeout")
	fs.DurationVar(&o.gossipInterval, "gossip-interval", 0, "override GossipInterval")
	fs.DurationVar(&o.pushPullInterval, "push-pull-interval", 0, "override PushPullInterval")
	fs.DurationVar(&o.leaveTimeout, "leave-timeout", 5*time.Second, "how long SIGTERM waits for the leave broadcast")
	fs.IntVar(&o.suspicionMult, "suspicion-mult", 0, "override SuspicionMult")
	fs.IntVar(&o.retransmitMult, "retransmit-mult", 0, "override RetransmitMult")
	fs.IntVar(&o.indirectChecks, "indirect-checks", 0, "override IndirectChecks")
	fs.IntVar(&o.gossipNodes, "gossip-nodes", 0, "override GossipNodes")
	fs.BoolVar(&o.noCompression, "no-compression", false, "disable compression (on by default, as in memberlist)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if o.name == "" {
		return o, fmt.Errorf("--name is required")
	}
	if o.label != "" {
		return o, fmt.Errorf("--label %q: memberlist 0.2.2 has no gossip labels; run this peer without --label", o.label)
	}
	if o.port <= 0 || o.port > 65535 {
		return o, fmt.Errorf("--port %d is not a valid port", o.port)
	}
	return o, nil
}

func buildConfig(o options) (*memberlist.Config, error) {
	var c *memberlist.Config
	switch o.config {
	case "lan":
		c = memberlist.DefaultLANConfig()
	case "wan":
		c = memberlist.DefaultWANConfig()
	case "local":
		c = memberlist.DefaultLocalConfig()
	default:
		return nil, fmt.Errorf("--config %q: use lan, wan or local", o.config)
	}
	c.Name = o.name
	c.BindAddr = o.bind
	c.BindPort = o.port
	c.AdvertiseAddr = o.bind
	c.AdvertisePort = o.port
	c.LogOutput = os.Stderr
	if o.probeInterval > 0 {
		c.ProbeInterval = o.probeInterval
	}
	if o.probeTimeout > 0 {
		c.ProbeTimeout = o.probeTimeout
	}
	if o.gossipInterval > 0 {
		c.GossipInterval = o.gossipInterval
	}
	if o.pushPullInterval > 0 {
		c.PushPullInterval = o.pushPullInterval
	}
	if o.suspicionMult > 0 {
		c.SuspicionMult = o.suspicionMult
	}
	if o.retransmitMult > 0 {
		c.RetransmitMult = o.retransmitMult
	}
	if o.indirectChecks > 0 {
		c.IndirectChecks = o.indirectChecks
	}
	if o.gossipNodes > 0 {
		c.GossipNodes = o.gossipNodes
	}
	c.EnableCompression = !o.noCompression
	if o.key != "" {
		key, err := base64.StdEncoding.DecodeString(o.key)
		if err != nil {
			return nil, fmt.Errorf("--key is not valid base64: %v", err)
		}
		if n := len(key); n != 16 && n != 24 && n != 32 {
			return nil, fmt.Errorf("--key decodes to %d bytes; AES needs 16, 24 or 32", n)
		}
		c.SecretKey = key
	}
	return c, nil
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
	conf.Events = track
	del := &delegate{out: out, state: []byte(o.state)}
	conf.Delegate = del

	list, err := memberlist.Create(conf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mlpeer: cannot start memberlist on %s:%d: %v\n", o.bind, o.port, err)
		os.Exit(1)
	}
	del.list = list
	local := list.LocalNode()
	out.emit(nodeEvent{nowMillis(), "ready", local.Name, net.JoinHostPort(local.Addr.String(), strconv.Itoa(int(local.Port)))})

	if o.join != "" {
		seeds := strings.Split(o.join, ",")
		if n, err := list.Join(seeds); err != nil {
			out.emit(errorEvent{nowMillis(), "error", fmt.Sprintf("join %v contacted %d: %v", seeds, n, err)})
		}
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
			if err := list.Leave(o.leaveTimeout); err != nil {
				log.Printf("[WARN] mlpeer: leave: %v", err)
			}
			if err := list.Shutdown(); err != nil {
				log.Printf("[WARN] mlpeer: shutdown: %v", err)
			}
			os.Exit(0)
		}
	}
}
