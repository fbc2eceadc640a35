// Command golden is the Go side of the Java memberlist codec's golden tests. It is built during the Java build
// against Debian's github.com/hashicorp/memberlist 0.2.2 and go-msgpack in GOPATH mode, and with -tags mlmodern in
// module mode against memberlist v0.5.4 (v054.mod) and the latest release (go.mod), which use go-msgpack/v2.
//
//	golden vectors          print "name hex..." lines: messages encoded with go-msgpack exactly as memberlist
//	                        does, LZW, CRC and AES-GCM vectors
//	golden decode           read Java-produced lines on stdin and answer with Go's view of them
//	golden serve [KEYHEX]   run one real memberlist node on loopback UDP+TCP (see serve.go)
//	golden trace [KEYHEX [LABEL]]  (LABEL: modern builds only) run a real 3-node memberlist cluster over a recording in-memory transport and print
//	                        every packet and stream it sends ("packet from to hex", "stream from to req reply")
package main

import (
	"bufio"
	"bytes"
	"compress/lzw"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"io/ioutil"
	"math"
	"os"
	"strings"
)

// The structs below carry memberlist's wire field names (the msgpack map keys); they are the protocol's facts,
// declared here because memberlist keeps its own unexported.

type ping struct {
	SeqNo      uint32
	Node       string
	SourceAddr []byte `codec:",omitempty"`
	SourcePort uint16 `codec:",omitempty"`
	SourceNode string `codec:",omitempty"`
}

type indirectPingReq struct {
	SeqNo      uint32
	Target     []byte
	Port       uint16
	Node       string
	Nack       bool
	SourceAddr []byte `codec:",omitempty"`
	SourcePort uint16 `codec:",omitempty"`
	SourceNode string `codec:",omitempty"`
}

type ackResp struct {
	SeqNo   uint32
	Payload []byte
}

type nackResp struct {
	SeqNo uint32
}

type errResp struct {
	Error string
}

type suspect struct {
	Incarnation uint32
	Node        string
	From        string
}

type alive struct {
	Incarnation uint32
	Node        string
	Addr        []byte
	Port        uint16
	Meta        []byte
	Vsn         []uint8
}

type dead struct {
	Incarnation uint32
	Node        string
	From        string
}

type pushPullHeader struct {
	Nodes        int
	UserStateLen int
	Join         bool
}

type userMsgHeader struct {
	UserMsgLen int
}

type pushNodeState struct {
	Name        string
	Addr        []byte
	Port        uint16
	Meta        []byte
	Incarnation uint32
	State       int
	Vsn         []uint8
}

type compress struct {
	Algo uint8
	Buf  []byte
}

func encodeBody(out *bytes.Buffer, v interface{}) {
	if err := newEncoder(out).Encode(v); err != nil {
		panic(err)
	}
}

func msg(t byte, v interface{}) []byte {
	var b bytes.Buffer
	b.WriteByte(t)
	encodeBody(&b, v)
	return b.Bytes()
}

func lzwCompress(in []byte) []byte {
	var b bytes.Buffer
	w := lzw.NewWriter(&b, lzw.LSB, 8)
	if _, err := w.Write(in); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func lzwDecompress(in []byte) ([]byte, error) {
	r := lzw.NewReader(bytes.NewReader(in), lzw.LSB, 8)
	defer r.Close()
	return ioutil.ReadAll(r)
}

func compressed(payload []byte) []byte {
	return msg(9, &compress{Algo: 0, Buf: lzwCompress(payload)})
}

// seal encrypts as memberlist does: [vsn][nonce][ct+tag], vsn 0 PKCS7-padding the plaintext first.
func seal(vsn byte, key, plain, aad []byte) []byte {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	nonce := make([]byte, 12)
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	if vsn == 0 {
		pad := 16 - len(plain)%16
		padded := append([]byte{}, plain...)
		for i := 0; i < pad; i++ {
			padded = append(padded, byte(pad))
		}
		plain = padded
	}
	out := append([]byte{vsn}, nonce...)
	return gcm.Seal(out, nonce, plain, aad)
}

func open(key, sealed, aad []byte) ([]byte, error) {
	if len(sealed) < 29 {
		return nil, fmt.Errorf("too short")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, sealed[1:13], sealed[13:], aad)
	if err != nil {
		return nil, err
	}
	if sealed[0] == 0 {
		n := int(plain[len(plain)-1])
		if n < 1 || n > 16 || n > len(plain) {
			return nil, fmt.Errorf("bad padding")
		}
		plain = plain[:len(plain)-n]
	}
	return plain, nil
}

func emit(name string, fields ...[]byte) {
	parts := []string{name}
	for _, f := range fields {
		if len(f) == 0 {
			parts = append(parts, "-")
		} else {
			parts = append(parts, hex.EncodeToString(f))
		}
	}
	fmt.Println(strings.Join(parts, " "))
}

func vectors() {
	lo := []byte{127, 0, 0, 1}
	lo16 := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}
	vsn := []uint8{1, 5, 2, 0, 0, 0}
	long40 := strings.Repeat("x", 40)
	long70k := strings.Repeat("y", 70000)

	emit("msg ping-min", msg(0, &ping{SeqNo: 1, Node: "n2"}))
	emit("msg ping-empty", msg(0, &ping{}))
	emit("msg ping-full", msg(0, &ping{SeqNo: 300, Node: "n2", SourceAddr: lo, SourcePort: 7946, SourceNode: "n1"}))
	emit("msg ping-max", msg(0, &ping{SeqNo: math.MaxUint32, Node: long40, SourceAddr: lo16, SourcePort: 65535, SourceNode: "ñødé"}))
	emit("msg indirect", msg(1, &indirectPingReq{SeqNo: 70000, Target: lo, Port: 7947, Node: "n2", Nack: true, SourceAddr: lo, SourcePort: 7946, SourceNode: "n1"}))
	emit("msg indirect-min", msg(1, &indirectPingReq{SeqNo: 200, Target: lo16, Port: 128, Node: "n3"}))
	emit("msg ack-nil", msg(2, &ackResp{SeqNo: 1}))
	emit("msg ack-empty", msg(2, &ackResp{SeqNo: 255, Payload: []byte{}}))
	emit("msg ack-40", msg(2, &ackResp{SeqNo: 65535, Payload: []byte(long40)}))
	emit("msg ack-70k", msg(2, &ackResp{SeqNo: 65536, Payload: []byte(long70k)}))
	emit("msg nack", msg(11, &nackResp{SeqNo: 5}))
	emit("msg err", msg(13, &errResp{Error: "boom"}))
	emit("msg err-empty", msg(13, &errResp{}))
	emit("msg suspect", msg(3, &suspect{Incarnation: 2, Node: "n2", From: "n1"}))
	emit("msg suspect-big", msg(3, &suspect{Incarnation: math.MaxUint32, Node: long40, From: strings.Repeat("z", 300)}))
	emit("msg alive-ip4", msg(4, &alive{Incarnation: 1, Node: "n1", Addr: lo, Port: 7946, Vsn: vsn}))
	emit("msg alive-ip16-meta", msg(4, &alive{Incarnation: 1, Node: "n1", Addr: lo16, Port: 7946, Meta: []byte("m"), Vsn: vsn}))
	emit("msg alive-meta512", msg(4, &alive{Incarnation: 1 << 20, Node: "node-with-a-longer-name", Addr: lo, Port: 80, Meta: bytes.Repeat([]byte{7}, 512), Vsn: vsn}))
	emit("msg dead", msg(5, &dead{Incarnation: 3, Node: "n1", From: "n1"}))
	emit("msg dead-other", msg(5, &dead{Incarnation: 127, Node: "n2", From: "n1"}))
	emit("msg user", []byte("\x08hello"))

	// push/pull stream: header, node states, raw user state
	var pp bytes.Buffer
	pp.WriteByte(6)
	encodeBody(&pp, &pushPullHeader{Nodes: 2, UserStateLen: 3, Join: false})
	encodeBody(&pp, &pushNodeState{Name: "n1", Addr: lo, Port: 7946, Incarnation: 1, State: 0, Vsn: vsn})
	encodeBody(&pp, &pushNodeState{Name: "n2", Addr: lo, Port: 7947, Meta: []byte("meta"), Incarnation: 4, State: 1, Vsn: vsn})
	pp.WriteString("usr")
	emit("stream pushpull", pp.Bytes())
	var ppj bytes.Buffer
	ppj.WriteByte(6)
	encodeBody(&ppj, &pushPullHeader{Nodes: 1, Join: true})
	encodeBody(&ppj, &pushNodeState{Name: "left", Addr: lo16, Port: 1, Incarnation: 200, State: 3, Vsn: vsn})
	emit("stream pushpull-join", ppj.Bytes())
	var um bytes.Buffer
	um.WriteByte(8)
	encodeBody(&um, &userMsgHeader{UserMsgLen: 5})
	um.WriteString("hello")
	emit("stream user", um.Bytes())
	emit("stream ping", msg(0, &ping{SeqNo: 9, Node: "n2"}))
	emit("stream ack", msg(2, &ackResp{SeqNo: 9}))
	emit("stream err", msg(13, &errResp{Error: "Failed to receive remote state"}))
	emit("stream pushpull-compressed", compressed(pp.Bytes()))

	// LZW: "lzw name input output"
	random := make([]byte, 20000)
	seed := uint32(12345)
	for i := range random {
		seed = seed*1103515245 + 12345
		random[i] = byte(seed >> 16)
	}
	text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog; ", 300))
	mixed := []byte{}
	for i := 0; i < 30000; i++ {
		mixed = append(mixed, byte((i*i)%251), byte(i%7))
	}
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"empty", []byte{}},
		{"one", []byte{42}},
		{"kwkwk", []byte("aaaaaaaaaaaaaaaaaaaaaaaaa")},
		{"abc240", []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz", 10)[:240])},
		{"text", text},
		{"random20k", random},
		{"zeros100k", make([]byte, 100000)},
		{"mixed60k", mixed},
	} {
		emit("lzw "+c.name, c.in, lzwCompress(c.in))
	}

	// compress wrapper and CRC as memberlist frames them
	aliveMsg := msg(4, &alive{Incarnation: 1, Node: "n1", Addr: lo, Port: 7946, Vsn: vsn})
	emit("compress alive", aliveMsg, compressed(aliveMsg))
	crcd := func(p []byte) []byte {
		out := []byte{12, 0, 0, 0, 0}
		c := crc32.ChecksumIEEE(p)
		out[1], out[2], out[3], out[4] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
		return append(out, p...)
	}
	emit("crc ping", msg(0, &ping{SeqNo: 1, Node: "n2"}), crcd(msg(0, &ping{SeqNo: 1, Node: "n2"})))
	emit("crc alive", aliveMsg, crcd(aliveMsg))

	// AES-GCM: "encrypt name key aad plaintext sealed" (random nonce: Java must open what Go sealed)
	for _, c := range []struct {
		name string
		vsn  byte
		key  int
		aad  []byte
		n    int
	}{
		{"v1-aes128-empty", 1, 16, nil, 0},
		{"v1-aes192-alive", 1, 24, nil, -1},
		{"v1-aes256-label", 1, 32, []byte("blue"), 100},
		{"v0-aes128-15", 0, 16, nil, 15},
		{"v0-aes128-16", 0, 16, nil, 16},
		{"v0-aes256-alive", 0, 32, nil, -1},
		{"v1-stream-aad", 1, 16, []byte{10, 0, 0, 0, 45}, 16},
	} {
		key := make([]byte, c.key)
		for i := range key {
			key[i] = byte(i*7 + c.key)
		}
		plain := aliveMsg
		if c.n >= 0 {
			plain = bytes.Repeat([]byte{0x5a}, c.n)
		}
		emit("encrypt "+c.name, key, c.aad, plain, seal(c.vsn, key, plain, c.aad))
	}
}

// decodeMessage decodes one message the way memberlist's handlers do (go-msgpack into the struct for its type)
// and re-encodes it, so the caller sees exactly what Go understood.
func decodeMessage(buf []byte) ([]byte, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("empty")
	}
	var v interface{}
	switch buf[0] {
	case 0:
		v = &ping{}
	case 1:
		v = &indirectPingReq{}
	case 2:
		v = &ackResp{}
	case 3:
		v = &suspect{}
	case 4:
		v = &alive{}
	case 5:
		v = &dead{}
	case 11:
		v = &nackResp{}
	case 13:
		v = &errResp{}
	case 8:
		return buf, nil
	default:
		return nil, fmt.Errorf("type %d", buf[0])
	}
	if err := newDecoder(bytes.NewReader(buf[1:])).Decode(v); err != nil {
		return nil, err
	}
	return msg(buf[0], v), nil
}

// decodeStream decodes a push/pull or user stream message the way memberlist reads one and re-encodes it.
func decodeStream(buf []byte) ([]byte, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("empty")
	}
	if buf[0] == 9 {
		var c compress
		if err := newDecoder(bytes.NewReader(buf[1:])).Decode(&c); err != nil {
			return nil, err
		}
		plain, err := lzwDecompress(c.Buf)
		if err != nil {
			return nil, err
		}
		return decodeStream(plain)
	}
	r := bytes.NewReader(buf[1:])
	dec := newDecoder(r)
	var out bytes.Buffer
	out.WriteByte(buf[0])
	switch buf[0] {
	case 6:
		var h pushPullHeader
		if err := dec.Decode(&h); err != nil {
			return nil, err
		}
		encodeBody(&out, &h)
		for i := 0; i < h.Nodes; i++ {
			var s pushNodeState
			if err := dec.Decode(&s); err != nil {
				return nil, err
			}
			encodeBody(&out, &s)
		}
		user := make([]byte, h.UserStateLen)
		if _, err := io.ReadFull(r, user); err != nil {
			return nil, err
		}
		out.Write(user)
	case 8:
		var h userMsgHeader
		if err := dec.Decode(&h); err != nil {
			return nil, err
		}
		encodeBody(&out, &h)
		user := make([]byte, h.UserMsgLen)
		if _, err := io.ReadFull(r, user); err != nil {
			return nil, err
		}
		out.Write(user)
	default:
		return decodeMessage(buf)
	}
	return out.Bytes(), nil
}

// decode answers one Java-produced vector per input line:
//
//	msg NAME HEX                    -> NAME <go re-encoding>
//	stream NAME HEX                 -> NAME <go re-encoding>
//	lzw NAME HEX                    -> NAME <decompressed>
//	encrypt NAME KEY AAD HEX        -> NAME <plaintext>   (AAD "-" = none)
//
// A failure answers "NAME ERR reason".
func decode() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) < 3 {
			continue
		}
		arg := func(i int) []byte {
			if f[i] == "-" {
				return nil
			}
			b, err := hex.DecodeString(f[i])
			if err != nil {
				panic(err)
			}
			return b
		}
		var out []byte
		var err error
		switch f[0] {
		case "msg":
			out, err = decodeMessage(arg(2))
		case "stream":
			out, err = decodeStream(arg(2))
		case "lzw":
			out, err = lzwDecompress(arg(2))
		case "encrypt":
			out, err = open(arg(2), arg(4), arg(3))
		default:
			err = fmt.Errorf("unknown kind %s", f[0])
		}
		if err != nil {
			fmt.Printf("%s ERR %s\n", f[1], strings.ReplaceAll(err.Error(), " ", "_"))
		} else {
			fmt.Printf("%s %s\n", f[1], hex.EncodeToString(out))
		}
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: golden vectors | decode | serve [KEYHEX] | trace [KEYHEX]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "vectors":
		vectors()
	case "decode":
		decode()
	case "serve":
		key := ""
		if len(os.Args) > 2 {
			key = os.Args[2]
		}
		serve(key)
	case "trace":
		key, label := "", ""
		if len(os.Args) > 2 {
			key = os.Args[2]
		}
		if len(os.Args) > 3 {
			label = os.Args[3]
		}
		trace(key, label)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}
