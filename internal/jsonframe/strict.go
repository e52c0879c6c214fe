package jsonframe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// Limits of a frame (docs/protocol.md, "Frames").
const (
	// MaxDepth is the deepest nesting of objects and arrays in a frame; the
	// Request object itself is level 1.
	MaxDepth = 64
	// MaxIDBytes is the longest string id, in bytes once decoded.
	MaxIDBytes = 256
	// MaxObjectMembers is the most members one object of a frame may have,
	// and MaxFrameMembers the most in all its objects together (the
	// Request object's included). The scan stops at the first member over
	// either, before decoding it: a frame of thousands of tiny members
	// costs no more than the bytes of an ordinary one (service/doc.go).
	MaxObjectMembers = 64
	MaxFrameMembers  = 256
)

// Frames are checked with jsontext, the tokenizer of go-json-experiment/json
// (the candidate encoding/json/v2): it implements RFC 8259 exactly and
// refuses invalid UTF-8, and walking its tokens lets the service stop at
// MaxDepth and find a repeated name with its place (envelope or params)
// in one pass, without building a tree. Params are then decoded with its
// Unmarshal, which matches names case-sensitively and refuses duplicates.

var (
	errDepth   = errors.New("nesting too deep")
	errMembers = errors.New("too many members")
)

// scanner walks one frame's tokens.
type scanner struct {
	d       *jsontext.Decoder
	dupName string // the first repeated name inside params
	members int    // members read so far, in every object of the frame
	// manyInParams says errMembers was met inside params.
	manyInParams bool
}

// member counts one more member of an object that has n so far, and
// reports errMembers past either limit.
func (s *scanner) member(n int, inParams bool) error {
	s.members++
	if n > MaxObjectMembers || s.members > MaxFrameMembers {
		s.manyInParams = inParams
		return errMembers
	}
	return nil
}

// fail turns a scan failure into the reply's error.
func (s *scanner) fail(err error) *wire.Error {
	if errors.Is(err, errMembers) {
		if s.manyInParams {
			return wire.Errorf(wire.CodeInvalidParams, "params: too many members: at most %d in an object and %d in a frame", MaxObjectMembers, MaxFrameMembers)
		}
		return wire.Errorf(wire.CodeInvalidRequest, "too many members: at most %d in an object and %d in a frame", MaxObjectMembers, MaxFrameMembers)
	}
	return syntaxError(err)
}

// value reads one value whose enclosing containers number depth.
func (s *scanner) value(depth int, inParams bool) error {
	switch s.d.PeekKind() {
	case '{':
		if depth+1 > MaxDepth {
			return errDepth
		}
		if _, err := s.d.ReadToken(); err != nil {
			return err
		}
		var seen names
		for n := 1; s.d.PeekKind() != '}'; n++ {
			if err := s.member(n, inParams); err != nil {
				return err
			}
			name, err := readString(s.d)
			if err != nil {
				return err
			}
			if seen.add(name) && inParams && s.dupName == "" {
				s.dupName = name
			}
			if err := s.value(depth+1, inParams); err != nil {
				return err
			}
		}
		_, err := s.d.ReadToken()
		return err
	case '[':
		if depth+1 > MaxDepth {
			return errDepth
		}
		if _, err := s.d.ReadToken(); err != nil {
			return err
		}
		for s.d.PeekKind() != ']' {
			if err := s.value(depth+1, inParams); err != nil {
				return err
			}
		}
		_, err := s.d.ReadToken()
		return err
	default: // a scalar, or 0 when the input is broken: ReadToken says how
		_, err := s.d.ReadToken()
		return err
	}
}

// names is the set of member names of one object; small objects (every
// request's envelope and params) use an array in place, with no
// allocation, large ones a map.
type names struct {
	small [smallNames]string
	n     int
	set   map[string]struct{}
}

// smallNames is how many names an object holds before its set is a map.
const smallNames = 8

// add records name and reports whether it was already there.
func (n *names) add(name string) bool {
	if n.set != nil {
		_, dup := n.set[name]
		n.set[name] = struct{}{}
		return dup
	}
	for _, x := range n.small[:n.n] {
		if x == name {
			return true
		}
	}
	if n.n < smallNames {
		n.small[n.n] = name
		n.n++
		return false
	}
	n.set = make(map[string]struct{}, 2*smallNames)
	for _, x := range n.small {
		n.set[x] = struct{}{}
	}
	n.set[name] = struct{}{}
	return false
}

// decoders are the frame decoders, reset for each frame: a decoder and its
// buffer were a tenth of the bytes a report allocated. Nothing Decode
// returns points into a decoder (the id is copied, params are a slice of
// the frame).
var decoders = sync.Pool{New: func() any { return new(pooledDecoder) }}

type pooledDecoder struct {
	r bytes.Reader
	d jsontext.Decoder
}

// Decode checks one frame strictly. On failure it returns the error
// to send and the id to send it with: null unless the envelope was sound
// and its id valid, and nil (send nothing) for a notification: an object
// read whole with "jsonrpc":"2.0" and a method but no "id" member gets no
// reply, whatever else is wrong with it (JSON-RPC 2.0: the server must not
// reply to a notification).
func Decode(frame []byte) (*Request, json.RawMessage, *wire.Error) {
	if !utf8.Valid(frame) {
		return nil, NullID, wire.Errorf(wire.CodeParseError, "invalid UTF-8: a frame must be UTF-8 JSON")
	}
	trimmed := trimJSONSpace(frame)
	if len(trimmed) == 0 {
		return nil, NullID, wire.Errorf(wire.CodeInvalidRequest, "empty frame: send one JSON-RPC request object per line")
	}
	pd := decoders.Get().(*pooledDecoder)
	defer decoders.Put(pd)
	pd.r.Reset(trimmed)
	pd.d.Reset(&pd.r, jsontext.AllowDuplicateNames(true))
	d := &pd.d
	defer pd.r.Reset(nil) // let go of the frame
	s := scanner{d: d}
	switch d.PeekKind() {
	case '[':
		return nil, NullID, wire.Errorf(wire.CodeInvalidRequest, "batches are not supported: send one request object per line")
	case '{':
	default:
		if err := s.value(0, false); err != nil {
			return nil, NullID, s.fail(err)
		}
		if err := atEnd(d); err != nil {
			return nil, NullID, err
		}
		return nil, NullID, wire.Errorf(wire.CodeInvalidRequest, "a frame must be one JSON-RPC request object")
	}
	d.ReadToken() // '{', known good
	var (
		req                  Request
		seen                 names
		envDup, unknown      string
		rawID                jsontext.Value
		hasID, badID         bool
		version              string
		badVersion, badMeth  bool
		hasVersion, hasMeth  bool
		paramsStart, paramsN int64
	)
	for n := 1; d.PeekKind() != '}'; n++ {
		if err := s.member(n, false); err != nil {
			return nil, NullID, s.fail(err)
		}
		name, err := readString(d)
		if err != nil {
			return nil, NullID, syntaxError(err)
		}
		if seen.add(name) && envDup == "" {
			envDup = name
		}
		kind := d.PeekKind()
		switch name {
		case "jsonrpc", "method":
			if kind == '"' {
				v, err := readString(d)
				if err != nil {
					return nil, NullID, syntaxError(err)
				}
				if name == "jsonrpc" {
					version, hasVersion = v, true
				} else {
					req.Method, hasMeth = v, true
				}
				continue
			}
			if name == "jsonrpc" {
				badVersion = true
			} else {
				badMeth = true
			}
		case "id":
			hasID = true
			if kind == '"' || kind == '0' || kind == 'n' {
				v, err := d.ReadValue()
				if err != nil {
					return nil, NullID, syntaxError(err)
				}
				rawID = bytes.Clone(v)
				continue
			}
			badID = true
		case "params":
			paramsStart = d.InputOffset()
			if err := s.value(1, true); err != nil {
				return nil, NullID, s.fail(err)
			}
			paramsN = d.InputOffset()
			req.Params = bytes.TrimLeft(trimmed[paramsStart:paramsN], " \t\r\n:")
			continue
		default:
			if unknown == "" {
				unknown = name
			}
		}
		if err := s.value(1, false); err != nil {
			return nil, NullID, s.fail(err)
		}
	}
	d.ReadToken() // '}'
	if err := atEnd(d); err != nil {
		return nil, NullID, err
	}

	// The object was read whole. One with "jsonrpc":"2.0" and a method
	// but no id is a notification: every error below is sent with id nil,
	// that is, not sent. One without even those is no Request at all, and
	// is told so with id null (JSON-RPC 2.0, section 5).
	id := NullID
	if !hasID && hasVersion && !badVersion && version == "2.0" && hasMeth && !badMeth && req.Method != "" {
		id = nil
	}
	switch {
	case envDup != "":
		return nil, id, wire.Errorf(wire.CodeInvalidRequest, "member %s appears twice in the request", QuoteName(envDup))
	case badID || (hasID && !validID(rawID)):
		return nil, id, wire.Errorf(wire.CodeInvalidRequest, `"id" must be a string of at most %d bytes, an integer or null`, MaxIDBytes)
	}
	if hasID {
		req.ID = json.RawMessage(rawID)
		id = req.ID
	}
	switch {
	case unknown != "":
		return nil, id, wire.Errorf(wire.CodeInvalidRequest, "unknown member %s (names are matched exactly: jsonrpc, id, method, params)", QuoteName(unknown))
	case badVersion || !hasVersion || version != "2.0":
		return nil, id, wire.Errorf(wire.CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	case badMeth || !hasMeth || req.Method == "":
		return nil, id, wire.Errorf(wire.CodeInvalidRequest, `"method" must be a non-empty string`)
	case s.dupName != "":
		return nil, id, wire.Errorf(wire.CodeInvalidParams, "params: member %s appears twice in an object", QuoteName(s.dupName))
	}
	return &req, id, nil
}

// readString reads the next string, an object's member name or a string
// value, and returns it unquoted. The strings every request repeats (the
// envelope's names and version, the methods, the report's members) are
// returned as constants, without a copy: each name copied was a tenth of
// the objects a report allocated.
func readString(d *jsontext.Decoder) (string, error) {
	v, err := d.ReadValue()
	if err != nil {
		return "", err
	}
	if v.Kind() != '"' {
		return "", errNotString
	}
	if raw := []byte(v); bytes.IndexByte(raw, '\\') < 0 {
		if s, ok := common(raw[1 : len(raw)-1]); ok {
			return s, nil
		}
	}
	b, err := jsontext.AppendUnquote(nil, v)
	return string(b), err
}

// errNotString: a name or value read as a string is some other kind of
// value, which the caller has ruled out (a name is always a string).
var errNotString = errors.New("not a string")

// common is b as one of the strings every request repeats, if it is one.
func common(b []byte) (string, bool) {
	switch string(b) { // compared without a conversion
	case "jsonrpc":
		return "jsonrpc", true
	case "2.0":
		return "2.0", true
	case "id":
		return "id", true
	case "method":
		return "method", true
	case "params":
		return "params", true
	case wire.MethodDiagnosticReport:
		return wire.MethodDiagnosticReport, true
	case wire.MethodHello:
		return wire.MethodHello, true
	case wire.MethodRuntimeOpen:
		return wire.MethodRuntimeOpen, true
	case "level":
		return "level", true
	case "message":
		return "message", true
	case "source":
		return "source", true
	case "token":
		return "token", true
	case "path":
		return "path", true
	}
	return "", false
}

// trimJSONSpace trims the whitespace RFC 8259 allows around a value
// (space, tab, LF, CR) and nothing else: a form feed, NBSP or U+2028
// around the object makes the frame malformed.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\n\r") }

// atEnd checks that nothing but whitespace follows the frame's value.
func atEnd(d *jsontext.Decoder) *wire.Error {
	if _, err := d.ReadToken(); err != io.EOF {
		return wire.Errorf(wire.CodeParseError, "malformed JSON: one JSON value per line")
	}
	return nil
}

// syntaxError turns a scan failure into the reply's error, naming the byte
// offset but nothing of the decoder's own wording.
func syntaxError(err error) *wire.Error {
	if errors.Is(err, errDepth) {
		return wire.Errorf(wire.CodeInvalidRequest, "nesting too deep: at most %d levels of objects and arrays", MaxDepth)
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return wire.Errorf(wire.CodeParseError, "malformed JSON at byte %d", se.ByteOffset)
	}
	return wire.Errorf(wire.CodeParseError, "malformed JSON: the frame ends inside a value")
}

// validID accepts a string of at most MaxIDBytes, an integer that fits in
// 64 bits, or null. raw is a complete, valid JSON value.
func validID(raw jsontext.Value) bool {
	switch raw.Kind() {
	case 'n':
		return true
	case '"':
		var s string
		return jsonv2.Unmarshal(raw, &s) == nil && len(s) <= MaxIDBytes
	case '0':
		if bytes.ContainsAny(raw, ".eE") {
			return false
		}
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil
	}
	return false
}

// QuoteName quotes a name from the peer (a member, a method) for an error
// message: ASCII only and at most about 40 bytes of it.
func QuoteName(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.QuoteToASCII(s[:cut]) + "..."
	}
	return strconv.QuoteToASCII(s)
}

// DecodeParams fills v, a pointer to one of the params structs of package wire,
// from an object; absent or null params count as {}. Errors name the
// field and what it must be, never a Go type. Members v does not name are
// ignored (diagnostic.report and session.hello: docs/protocol.md, "Frames").
func DecodeParams(raw []byte, v any) *wire.Error { return unmarshalParams(raw, v, false) }

// DecodeParamsStrict is DecodeParams that refuses a member v does not
// name, with -32602 naming it: host methods and the probes.
func DecodeParamsStrict(raw []byte, v any) *wire.Error { return unmarshalParams(raw, v, true) }

func unmarshalParams(raw []byte, v any, strict bool) *wire.Error {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] != '{' {
		return wire.Errorf(wire.CodeInvalidParams, "params must be an object")
	}
	if err := jsonv2.Unmarshal(raw, v, jsonv2.RejectUnknownMembers(strict)); err != nil {
		return wire.Errorf(wire.CodeInvalidParams, "params: %s", describe(err))
	}
	return nil
}

// describe says which field of the params is wrong and what it must be.
func describe(err error) string {
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) || se.JSONPointer == "" {
		return "not the expected object"
	}
	segs := strings.Split(strings.TrimPrefix(string(se.JSONPointer), "/"), "/")
	if errors.Is(se.Err, jsonv2.ErrUnknownName) && len(segs) == 1 {
		return "unknown member " + QuoteName(segs[0]) + " (this method takes no other members)"
	}
	field := "field " + QuoteName(segs[0])
	if len(segs) > 1 {
		field += " at " + QuoteName("/"+strings.Join(segs[1:], "/"))
	}
	want := "of another type"
	if se.GoType != nil {
		t := se.GoType
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Int, reflect.Int64, reflect.Int32:
			want = "an integer in range"
		case reflect.Uint64, reflect.Uint, reflect.Uint32:
			want = "a non-negative integer in range"
		case reflect.Bool:
			want = "true or false"
		case reflect.Slice:
			want = "an array"
		case reflect.Struct, reflect.Map:
			want = "an object"
		}
	}
	return field + " must be " + want
}
