package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// keyList collects repeated --key flags; the first is the primary key.
type keyList []string

func (k *keyList) String() string     { return fmt.Sprint(*k) }
func (k *keyList) Set(v string) error { *k = append(*k, v); return nil }

// explicitBool is a boolean flag that takes its value as the next argument ("--compression false"), as the Java
// node's option does; Go's own bool flags only accept "--compression=false".
type explicitBool struct{ value *bool }

func (b explicitBool) String() string {
	if b.value == nil {
		return ""
	}
	return strconv.FormatBool(*b.value)
}

func (b explicitBool) Set(v string) error {
	parsed, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false, got %q", v)
	}
	*b.value = parsed
	return nil
}

type options struct {
	name, bind, advertise, join, label, config, meta, state string
	keys                                                    keyList
	port                                                    int
	compression, skipInboundLabelCheck                      bool
	leaveTimeout                                            time.Duration
	durations                                               map[string]*time.Duration
	ints                                                    map[string]*int
}

func parseOptions(args []string) (options, error) {
	o := options{durations: map[string]*time.Duration{}, ints: map[string]*int{}}
	fs := flag.NewFlagSet("mlpeer", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&o.name, "name", "", "unique node name (required)")
	fs.StringVar(&o.bind, "bind", "0.0.0.0", "address to bind UDP and TCP")
	fs.StringVar(&o.advertise, "advertise", "", "address announced to peers (default: the bound address)")
	fs.IntVar(&o.port, "port", 7946, "port for UDP and TCP; 0 = any free port")
	fs.StringVar(&o.join, "join", "", "HOST:PORT[,HOST:PORT...] to join; retried every second until one answers")
	fs.Var(&o.keys, "key", "base64 AES key (16, 24 or 32 bytes); repeat to install more, the first is primary")
	fs.StringVar(&o.label, "label", "", "gossip label (memberlist >= 0.3; refused by the 0.2.2 build)")
	fs.BoolVar(&o.skipInboundLabelCheck, "skip-inbound-label-check", false,
		"SkipInboundLabelCheck: inbound traffic comes without a label header (memberlist >= 0.3)")
	fs.StringVar(&o.config, "config", "lan", "base configuration: lan, wan or local")
	o.compression = true
	fs.Var(explicitBool{&o.compression}, "compression", "EnableCompression: true or false (default true)")
	fs.StringVar(&o.meta, "meta", "", "node metadata (UTF-8, at most 512 bytes)")
	fs.StringVar(&o.state, "state", "", "push/pull local state (UTF-8)")
	fs.DurationVar(&o.leaveTimeout, "leave-timeout", 5*time.Second, "how long SIGTERM waits for the leave broadcast")
	for _, name := range []string{"probe-interval", "probe-timeout", "gossip-interval", "push-pull-interval",
		"gossip-to-the-dead-time", "tcp-timeout"} {
		o.durations[name] = fs.Duration(name, 0, "override the duration of the base configuration")
	}
	for _, name := range []string{"suspicion-mult", "suspicion-max-timeout-mult", "retransmit-mult",
		"indirect-checks", "gossip-nodes", "awareness-max-multiplier"} {
		o.ints[name] = fs.Int(name, 0, "override the integer of the base configuration")
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if o.name == "" {
		return o, fmt.Errorf("--name is required")
	}
	if o.port < 0 || o.port > 65535 {
		return o, fmt.Errorf("--port %d is not a valid port (0..65535)", o.port)
	}
	if len(o.meta) > memberlist.MetaMaxSize {
		return o, fmt.Errorf("--meta is %d bytes; at most %d", len(o.meta), memberlist.MetaMaxSize)
	}
	for name, d := range o.durations {
		if *d < 0 {
			return o, fmt.Errorf("--%s %v must not be negative", name, *d)
		}
	}
	for name, n := range o.ints {
		if *n < 0 {
			return o, fmt.Errorf("--%s %s must not be negative", name, strconv.Itoa(*n))
		}
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
	c.LogOutput = os.Stderr
	c.EnableCompression = o.compression
	if err := applyLabelOptions(c, o); err != nil {
		return nil, err
	}
	setDuration(&c.ProbeInterval, o.durations["probe-interval"])
	setDuration(&c.ProbeTimeout, o.durations["probe-timeout"])
	setDuration(&c.GossipInterval, o.durations["gossip-interval"])
	setDuration(&c.PushPullInterval, o.durations["push-pull-interval"])
	setDuration(&c.GossipToTheDeadTime, o.durations["gossip-to-the-dead-time"])
	setDuration(&c.TCPTimeout, o.durations["tcp-timeout"])
	setInt(&c.SuspicionMult, o.ints["suspicion-mult"])
	setInt(&c.SuspicionMaxTimeoutMult, o.ints["suspicion-max-timeout-mult"])
	setInt(&c.RetransmitMult, o.ints["retransmit-mult"])
	setInt(&c.IndirectChecks, o.ints["indirect-checks"])
	setInt(&c.GossipNodes, o.ints["gossip-nodes"])
	setInt(&c.AwarenessMaxMultiplier, o.ints["awareness-max-multiplier"])
	if len(o.keys) > 0 {
		keys := make([][]byte, 0, len(o.keys))
		for _, text := range o.keys {
			key, err := base64.StdEncoding.DecodeString(text)
			if err != nil {
				return nil, fmt.Errorf("--key is not valid base64: %v", err)
			}
			if n := len(key); n != 16 && n != 24 && n != 32 {
				return nil, fmt.Errorf("--key decodes to %d bytes; AES needs 16, 24 or 32", n)
			}
			keys = append(keys, key)
		}
		keyring, err := memberlist.NewKeyring(keys, keys[0])
		if err != nil {
			return nil, fmt.Errorf("--key: %v", err)
		}
		c.Keyring = keyring
	}
	return c, nil
}

func setDuration(target *time.Duration, value *time.Duration) {
	if *value > 0 {
		*target = *value
	}
}

func setInt(target *int, value *int) {
	if *value > 0 {
		*target = *value
	}
}
