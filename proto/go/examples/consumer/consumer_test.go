package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	fencingv1 "github.com/fencing/fencing/proto/go/fencing/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// agent is an in-process stand-in for the fencing agent's API: GetAll answers members, StreamEvents sends a
// snapshot JOIN per member and then whatever is put on live, until the server stops.
type agent struct {
	fencingv1.UnimplementedFencingServer
	members []string
	live    chan *fencingv1.Event
	server  *grpc.Server
	done    chan struct{}
}

var decided = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func event(t fencingv1.EventType, node, source string) *fencingv1.Event {
	return &fencingv1.Event{Type: t, Node: &fencingv1.Node{Name: node, Addresses: map[string]string{"InternalIP": "198.18.0.1"}},
		Time: timestamppb.New(decided), SourceName: &source}
}

func (a *agent) GetAll(context.Context, *emptypb.Empty) (*fencingv1.AllNodes, error) {
	all := &fencingv1.AllNodes{}
	for _, m := range a.members {
		all.Nodes = append(all.Nodes, &fencingv1.Node{Name: m})
	}
	return all, nil
}

func (a *agent) StreamEvents(_ *emptypb.Empty, s grpc.ServerStreamingServer[fencingv1.Event]) error {
	for _, m := range a.members {
		if err := s.Send(event(fencingv1.EventType_JOIN, m, "snapshot")); err != nil {
			return err
		}
	}
	for {
		select {
		case ev := <-a.live:
			if err := s.Send(ev); err != nil {
				return err
			}
		case <-a.done:
			return status.Error(codes.Unavailable, "agent stopping")
		case <-s.Context().Done():
			return s.Context().Err()
		}
	}
}

// startAgent serves a stand-in agent on socket (a Unix socket in a temp dir) until stopAgent.
func startAgent(t *testing.T, socket string, members ...string) *agent {
	t.Helper()
	lis, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatalf("listen %s: %v", socket, err)
	}
	a := &agent{members: members, live: make(chan *fencingv1.Event, 16), server: grpc.NewServer(), done: make(chan struct{})}
	fencingv1.RegisterFencingServer(a.server, a)
	go func() { _ = a.server.Serve(lis) }()
	return a
}

// stopAgent ends the streams with UNAVAILABLE (as the agent's close does) and stops serving; the socket goes away.
func (a *agent) stop() {
	close(a.done)
	a.server.Stop()
}

// lines hands the consumer's output to the test line by line.
type lines struct {
	w  *io.PipeWriter
	ch chan Line
}

func newLines(t *testing.T) *lines {
	r, w := io.Pipe()
	l := &lines{w: w, ch: make(chan Line, 64)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var line Line
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Errorf("output line %q is not JSON: %v", sc.Text(), err)
				continue
			}
			l.ch <- line
		}
	}()
	return l
}

func (l *lines) next(t *testing.T) Line {
	t.Helper()
	select {
	case line := <-l.ch:
		return line
	case <-time.After(10 * time.Second):
		t.Fatal("no output line within 10 s")
		return Line{}
	}
}

// a clock that ticks one second per reading, so each line's Received is known
type tickingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// startConsumer runs a Consumer on socket (fast backoff for the test) until the test ends, bounded by 30 s.
func startConsumer(t *testing.T, socket string, out io.Writer, clock func() time.Time, logged *logLines) {
	t.Helper()
	conn, err := Dial(socket, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c := &Consumer{Client: fencingv1.NewFencingClient(conn), Now: clock,
		Backoff: Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond}, CallTimeout: 2 * time.Second,
		Out: out, Log: logged.logf}
	finished := make(chan error, 1)
	go func() { finished <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-finished:
			if err != nil {
				t.Errorf("Run returned %v after its context ended", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10 s of its context ending")
		}
		conn.Close()
	})
}

func TestGetAllThenStreamEventsPrintsOneLinePerEventWithTheReceivedTime(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "agent.sock")
	a := startAgent(t, socket, "node-b", "node-a")
	defer a.stop()
	out := newLines(t)
	clock := &tickingClock{t: decided}
	startConsumer(t, socket, out.w, clock.now, &logLines{})

	sync := out.next(t)
	if sync.Event != "SYNC" || strings.Join(sync.Nodes, ",") != "node-a,node-b" || !sync.Received.Equal(decided.Add(time.Second)) {
		t.Fatalf("first line %+v, want SYNC of node-a,node-b received at +1s", sync)
	}
	for _, want := range []string{"node-b", "node-a"} {
		if j := out.next(t); j.Event != "JOIN" || j.Node != want || j.Source != "snapshot" {
			t.Fatalf("line %+v, want the snapshot JOIN of %s", j, want)
		}
	}
	a.live <- event(fencingv1.EventType_LEFT, "node-b", "gossip")
	left := out.next(t)
	if left.Event != "LEFT" || left.Node != "node-b" || left.Source != "gossip" || left.Time == nil ||
		!left.Time.Equal(decided) || left.Addresses["InternalIP"] != "198.18.0.1" ||
		!left.Received.Equal(decided.Add(4*time.Second)) {
		t.Fatalf("line %+v, want LEFT node-b by gossip decided at %s, received at +4s", left, decided)
	}
}

func TestAgentRestartIsFollowedByAResyncWithGetAllAndANewStream(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "agent.sock")
	first := startAgent(t, socket, "node-a", "node-b")
	out := newLines(t)
	startConsumer(t, socket, out.w, time.Now, &logLines{})
	if l := out.next(t); l.Event != "SYNC" || strings.Join(l.Nodes, ",") != "node-a,node-b" {
		t.Fatalf("line %+v, want the first SYNC", l)
	}
	out.next(t)
	out.next(t)

	// the agent goes away; a restarted agent, which no longer sees node-b, serves the same socket
	first.stop()
	second := startAgent(t, socket, "node-a", "node-c")
	defer second.stop()

	if l := out.next(t); l.Event != "SYNC" || strings.Join(l.Nodes, ",") != "node-a,node-c" {
		t.Fatalf("line %+v, want a SYNC with the restarted agent's members", l)
	}
	for _, want := range []string{"node-a", "node-c"} {
		if j := out.next(t); j.Event != "JOIN" || j.Node != want {
			t.Fatalf("line %+v, want the new stream's snapshot JOIN of %s", j, want)
		}
	}
	second.live <- event(fencingv1.EventType_JOIN, "node-b", "gossip")
	if j := out.next(t); j.Event != "JOIN" || j.Node != "node-b" || j.Source != "gossip" {
		t.Fatalf("line %+v, want node-b's live JOIN on the new stream", j)
	}
}

func TestReconnectAttemptsBackOffUpToTheBoundWhileTheAgentIsAway(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "agent.sock")
	out := newLines(t)
	logged := &logLines{}
	startConsumer(t, socket, out.w, time.Now, logged)

	// no agent yet: every attempt fails and is logged with a growing delay that stops at the bound
	deadline := time.Now().Add(10 * time.Second)
	for logged.count("event=stream_lost") < 6 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	delays := logged.delays()
	want := []string{"20ms", "40ms", "80ms", "160ms", "200ms", "200ms"}
	if len(delays) < len(want) || strings.Join(delays[:len(want)], ",") != strings.Join(want, ",") {
		t.Fatalf("retry delays %v, want %v first", delays, want)
	}

	// once the agent is there the consumer syncs
	a := startAgent(t, socket, "node-a")
	defer a.stop()
	if l := out.next(t); l.Event != "SYNC" || strings.Join(l.Nodes, ",") != "node-a" {
		t.Fatalf("line %+v, want a SYNC once the agent serves", l)
	}
}

func TestBackoffDoublesUpToMaxAndResetStartsOver(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: 500 * time.Millisecond}
	var got []time.Duration
	for range 6 {
		got = append(got, b.Next())
	}
	want := []time.Duration{100, 200, 400, 500, 500, 500}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", got, want)
		}
	}
	b.Reset()
	if d := b.Next(); d != 100*time.Millisecond {
		t.Fatalf("after Reset %v, want 100ms", d)
	}
}

// logLines records the consumer's log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(f string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(f, args...))
}

func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (l *logLines) delays() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if i := strings.Index(line, "retry_in="); i >= 0 {
			out = append(out, line[i+len("retry_in="):])
		}
	}
	return out
}
