package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	fencingv1 "github.com/fencing/fencing/proto/go/fencing/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Dial opens a plaintext channel to the agent's Unix socket (an absolute path). The channel's own reconnect delay
// is capped at maxBackoff as well: gRPC's default grows to 120 s, which would leave a consumer blind for minutes
// after a long agent outage.
func Dial(socket string, maxBackoff time.Duration) (*grpc.ClientConn, error) {
	connectBackoff := backoff.DefaultConfig
	connectBackoff.MaxDelay = maxBackoff
	return grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: connectBackoff}))
}

// Line is one JSON line of output: a SYNC (the GetAll answer after every (re)connect) or a JOIN/LEFT event.
type Line struct {
	// Received is when this consumer got the answer or event (its own clock), for latency measurements.
	Received time.Time `json:"received"`
	// Event is SYNC, JOIN, LEFT or UNDEFINED.
	Event string `json:"event"`
	// Node is the member an event is about.
	Node string `json:"node,omitempty"`
	// Nodes are the members GetAll returned, sorted (SYNC only).
	Nodes []string `json:"nodes,omitempty"`
	// Time is when the agent decided the event (the agent's clock).
	Time *time.Time `json:"time,omitempty"`
	// Source is what decided it: "snapshot", "gossip" or "isolated".
	Source string `json:"source,omitempty"`
	// Addresses are the node's addresses per network.
	Addresses map[string]string `json:"addresses,omitempty"`
}

// Backoff is a bounded exponential delay between reconnect attempts: Initial, doubling up to Max. Without jitter:
// each agent has one local consumer, so there is no herd to spread.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	next    time.Duration
}

// Next returns the delay before the next attempt and advances the sequence.
func (b *Backoff) Next() time.Duration {
	if b.next == 0 {
		b.next = b.Initial
	}
	d := b.next
	b.next = min(2*b.next, b.Max)
	return min(d, b.Max)
}

// Reset starts the sequence over (after a successful resync).
func (b *Backoff) Reset() { b.next = 0 }

// Consumer does what a Cilium-like consumer of the agent socket does: GetAll to learn the current members, then
// StreamEvents for changes; when the stream or the connection fails (the agent restarted, the socket went away)
// it waits a bounded backoff and starts over with GetAll, so its view is resynchronised after every restart.
type Consumer struct {
	Client fencingv1.FencingClient
	// Now is this consumer's clock, stamped on every line as Received.
	Now func() time.Time
	// Backoff spaces reconnect attempts.
	Backoff Backoff
	// CallTimeout bounds GetAll.
	CallTimeout time.Duration
	// Out receives one JSON line per SYNC and per event.
	Out io.Writer
	// Log receives one line per failed attempt (never the events).
	Log func(format string, args ...any)

	mu sync.Mutex
}

// Run consumes until ctx ends; it returns nil then. Failed attempts are logged and retried after the backoff.
func (c *Consumer) Run(ctx context.Context) error {
	for {
		err := c.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		delay := c.Backoff.Next()
		c.Log("event=stream_lost error=%q retry_in=%s", err.Error(), delay)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

// session is one GetAll + StreamEvents; it returns why it ended.
func (c *Consumer) session(ctx context.Context) error {
	callCtx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	all, err := c.Client.GetAll(callCtx, &emptypb.Empty{})
	cancel()
	if err != nil {
		return fmt.Errorf("GetAll: %w", err)
	}
	received := c.Now()
	names := make([]string, 0, len(all.GetNodes()))
	for _, n := range all.GetNodes() {
		names = append(names, n.GetName())
	}
	sort.Strings(names)
	if err := c.emit(Line{Received: received, Event: "SYNC", Nodes: names}); err != nil {
		return err
	}

	streamCtx, cancelStream := context.WithCancel(ctx)
	defer cancelStream()
	stream, err := c.Client.StreamEvents(streamCtx, &emptypb.Empty{})
	if err != nil {
		return fmt.Errorf("StreamEvents: %w", err)
	}
	first := true
	for {
		ev, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("StreamEvents: the agent ended the stream")
			}
			return fmt.Errorf("StreamEvents: %w", err)
		}
		received := c.Now()
		if first {
			// the stream is up: the next failure starts from the shortest delay again
			c.Backoff.Reset()
			first = false
		}
		line := Line{Received: received, Event: ev.GetType().String(), Node: ev.GetNode().GetName(),
			Source: ev.GetSourceName(), Addresses: ev.GetNode().GetAddresses()}
		if ev.GetTime() != nil {
			t := ev.GetTime().AsTime()
			line.Time = &t
		}
		if err := c.emit(line); err != nil {
			return err
		}
	}
}

func (c *Consumer) emit(line Line) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("encoding output: %w", err)
	}
	_, err = c.Out.Write(append(b, '\n'))
	return err
}
