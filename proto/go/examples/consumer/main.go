// Command consumer is an example Go consumer of the fencing agent's local API (fencing.v1 on a Unix socket), doing
// what Cilium does: GetAll, then StreamEvents, and on any disconnect a bounded backoff, then GetAll again (a resync
// after an agent restart) and a new stream. It prints one JSON line per SYNC and per JOIN/LEFT event, stamped with
// the time it received it, on stdout; failures go to stderr.
//
//	go run ./examples/consumer -socket /var/run/fencing-agent.sock
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	fencingv1 "github.com/fencing/fencing/proto/go/fencing/v1"
)

func main() {
	socket := flag.String("socket", "/var/run/fencing-agent.sock", "the agent's Unix socket")
	initial := flag.Duration("initial-backoff", 100*time.Millisecond, "first delay before reconnecting")
	maxBackoff := flag.Duration("max-backoff", 5*time.Second, "longest delay between reconnect attempts")
	callTimeout := flag.Duration("call-timeout", 5*time.Second, "deadline of GetAll")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "consumer: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if *initial <= 0 || *maxBackoff < *initial || *callTimeout <= 0 {
		fmt.Fprintln(os.Stderr, "consumer: need 0 < -initial-backoff <= -max-backoff and -call-timeout > 0")
		os.Exit(2)
	}
	path, err := filepath.Abs(*socket)
	if err != nil {
		fmt.Fprintf(os.Stderr, "consumer: socket path %q: %v\n", *socket, err)
		os.Exit(2)
	}

	conn, err := Dial(path, *maxBackoff)
	if err != nil {
		fmt.Fprintf(os.Stderr, "consumer: %v\n", err)
		os.Exit(1)
	}
	defer conn.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := log.New(os.Stderr, "consumer: ", log.LstdFlags|log.LUTC)
	c := &Consumer{
		Client:      fencingv1.NewFencingClient(conn),
		Now:         time.Now,
		Backoff:     Backoff{Initial: *initial, Max: *maxBackoff},
		CallTimeout: *callTimeout,
		Out:         os.Stdout,
		Log:         logger.Printf,
	}
	logger.Printf("event=start socket=%s", path)
	if err := c.Run(ctx); err != nil {
		logger.Printf("event=exit error=%q", err.Error())
		os.Exit(1)
	}
}
