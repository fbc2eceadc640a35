package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io/ioutil"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// recorder is an in-memory network for real memberlist nodes that records every packet and stream byte they send.
type recorder struct {
	mu      sync.Mutex
	nodes   map[string]*memTransport
	dropUDP map[string]bool // "from>to" pairs whose packets are recorded but not delivered
	packets []string
	streams []*streamRec
}

type streamRec struct {
	mu       sync.Mutex
	from, to string
	request  bytes.Buffer
	reply    bytes.Buffer
}

type memTransport struct {
	rec      *recorder
	name     string
	port     int
	packetCh chan *memberlist.Packet
	streamCh chan net.Conn
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func (t *memTransport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	return net.IPv4(127, 0, 0, 1).To4(), t.port, nil
}

func (t *memTransport) WriteTo(b []byte, to string) (time.Time, error) {
	r := t.rec
	r.mu.Lock()
	r.packets = append(r.packets, fmt.Sprintf("packet %s %s %s", addr(t.port), to, hex.EncodeToString(b)))
	dest := r.nodes[to]
	drop := r.dropUDP[addr(t.port)+">"+to] || r.dropUDP["*>"+to]
	r.mu.Unlock()
	if dest != nil && !drop {
		p := &memberlist.Packet{Buf: append([]byte{}, b...), From: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: t.port}, Timestamp: time.Now()}
		select {
		case dest.packetCh <- p:
		default:
		}
	}
	return time.Now(), nil
}

func (t *memTransport) PacketCh() <-chan *memberlist.Packet { return t.packetCh }

func (t *memTransport) DialTimeout(to string, timeout time.Duration) (net.Conn, error) {
	r := t.rec
	r.mu.Lock()
	dest := r.nodes[to]
	r.mu.Unlock()
	if dest == nil {
		return nil, fmt.Errorf("no node at %s", to)
	}
	a, b := net.Pipe()
	s := &streamRec{from: addr(t.port), to: to}
	r.mu.Lock()
	r.streams = append(r.streams, s)
	r.mu.Unlock()
	dest.streamCh <- &recConn{Conn: b, rec: s, buf: &s.reply}
	return &recConn{Conn: a, rec: s, buf: &s.request}, nil
}

func (t *memTransport) StreamCh() <-chan net.Conn { return t.streamCh }

func (t *memTransport) Shutdown() error {
	t.rec.mu.Lock()
	delete(t.rec.nodes, addr(t.port))
	t.rec.mu.Unlock()
	return nil
}

// recConn records what its side writes.
type recConn struct {
	net.Conn
	rec *streamRec
	buf *bytes.Buffer
}

func (c *recConn) Write(b []byte) (int, error) {
	c.rec.mu.Lock()
	c.buf.Write(b)
	c.rec.mu.Unlock()
	return c.Conn.Write(b)
}

type delegate struct {
	name string
	mu   sync.Mutex
	sent bool
}

func (d *delegate) NodeMeta(limit int) []byte { return []byte("meta-" + d.name) }
func (d *delegate) NotifyMsg([]byte)          {}
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sent {
		return nil
	}
	d.sent = true
	return [][]byte{[]byte("broadcast-from-" + d.name)}
}
func (d *delegate) LocalState(join bool) []byte            { return []byte("state-of-" + d.name) }
func (d *delegate) MergeRemoteState(buf []byte, join bool) {}

// trace runs nodes a, b, c: join, user messages, a lossy link to c (indirect probes, nacks, TCP fallback pings,
// suspicion), then c leaves; it prints everything sent, sorted for readability.
func trace(keyHex, label string) {
	rec := &recorder{nodes: map[string]*memTransport{}, dropUDP: map[string]bool{}}
	var key []byte
	if keyHex != "" {
		var err error
		if key, err = hex.DecodeString(keyHex); err != nil {
			panic(err)
		}
	}
	create := func(name string, port int) *memberlist.Memberlist {
		t := &memTransport{rec: rec, name: name, port: port, packetCh: make(chan *memberlist.Packet, 1024), streamCh: make(chan net.Conn, 16)}
		rec.mu.Lock()
		rec.nodes[addr(port)] = t
		rec.mu.Unlock()
		c := memberlist.DefaultLocalConfig()
		c.Name = name
		c.Transport = t
		c.BindPort = port
		c.AdvertisePort = port
		c.ProbeInterval = 100 * time.Millisecond
		c.ProbeTimeout = 40 * time.Millisecond
		c.GossipInterval = 20 * time.Millisecond
		c.PushPullInterval = 250 * time.Millisecond
		c.SuspicionMult = 2
		c.Delegate = &delegate{name: name}
		c.SecretKey = key
		setLabel(c, label)
		c.LogOutput = ioutil.Discard
		m, err := memberlist.Create(c)
		if err != nil {
			panic(err)
		}
		return m
	}
	a := create("a", 7001)
	b := create("b", 7002)
	c := create("c", 7003)
	if _, err := b.Join([]string{addr(7001)}); err != nil {
		panic(err)
	}
	if _, err := c.Join([]string{addr(7001)}); err != nil {
		panic(err)
	}
	time.Sleep(500 * time.Millisecond)
	var bNode *memberlist.Node
	for _, n := range a.Members() {
		if n.Name == "b" {
			bNode = n
		}
	}
	if err := a.SendBestEffort(bNode, []byte("hello-udp")); err != nil {
		panic(err)
	}
	if err := a.SendReliable(bNode, []byte("hello-tcp")); err != nil {
		panic(err)
	}
	time.Sleep(200 * time.Millisecond)
	setDrop := func(pair string, on bool) {
		rec.mu.Lock()
		rec.dropUDP[pair] = on
		rec.mu.Unlock()
	}
	setDrop(addr(7001)+">"+addr(7003), true)
	time.Sleep(500 * time.Millisecond)
	setDrop("*>"+addr(7003), true)
	time.Sleep(700 * time.Millisecond)
	setDrop(addr(7001)+">"+addr(7003), false)
	setDrop("*>"+addr(7003), false)
	time.Sleep(400 * time.Millisecond)
	_ = c.Leave(300 * time.Millisecond)
	_ = c.Shutdown()
	time.Sleep(300 * time.Millisecond)
	_ = a.Shutdown()
	_ = b.Shutdown()
	time.Sleep(50 * time.Millisecond)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	lines := append([]string{}, rec.packets...)
	for _, s := range rec.streams {
		s.mu.Lock()
		reply := "-"
		if s.reply.Len() > 0 {
			reply = hex.EncodeToString(s.reply.Bytes())
		}
		lines = append(lines, fmt.Sprintf("stream %s %s %s %s", s.from, s.to, hex.EncodeToString(s.request.Bytes()), reply))
		s.mu.Unlock()
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i][:6] > lines[j][:6] })
	for _, l := range lines {
		fmt.Println(l)
	}
}
