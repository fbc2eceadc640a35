//go:build !mlmodern

package main

import (
	"io"

	"github.com/hashicorp/go-msgpack/codec"
	"github.com/hashicorp/memberlist"
)

// memberlist 0.2.2 encodes with go-msgpack 0.5.x.

func newEncoder(w io.Writer) *codec.Encoder { return codec.NewEncoder(w, &codec.MsgpackHandle{}) }

func newDecoder(r io.Reader) *codec.Decoder { return codec.NewDecoder(r, &codec.MsgpackHandle{}) }

// setLabel refuses a label: 0.2.2 has none.
func setLabel(c *memberlist.Config, label string) {
	if label != "" {
		panic("memberlist 0.2.2 has no gossip labels")
	}
}
