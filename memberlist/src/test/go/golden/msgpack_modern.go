//go:build mlmodern

package main

import (
	"io"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/memberlist"
)

// memberlist >= 0.5.1 encodes with go-msgpack/v2 (same handle settings as memberlist's encode/decode).

func newEncoder(w io.Writer) *codec.Encoder { return codec.NewEncoder(w, &codec.MsgpackHandle{}) }

func newDecoder(r io.Reader) *codec.Decoder { return codec.NewDecoder(r, &codec.MsgpackHandle{}) }

func setLabel(c *memberlist.Config, label string) { c.Label = label }
