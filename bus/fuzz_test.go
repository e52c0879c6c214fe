package bus

import (
	"fmt"
	"slices"
	"testing"
)

// Handler behaviours in FuzzBus: what a handler does after logging its call.
const (
	actNone  = iota
	actOff   // call another subscription's off (maybe its own, maybe twice)
	actOn    // subscribe a new plain handler
	actEmit  // Emit on a topic (bounded depth)
	actPanic // panic
	actClose // Close the bus
	numActs
)

var fuzzTopics = []string{"a", "b", ""}

type fuzzHandler struct {
	topic  string
	act    int
	arg    int    // target subscription for actOff
	topic2 string // topic for actOn and actEmit
}

// FuzzBus runs a random sequence of On, off, Emit and Close, with handlers
// that themselves call On, off, Emit, Close or panic, against a plain model of
// the documented semantics (snapshot at Emit start, skip removed, stop at
// Close), and compares the exact call sequence and the panic reports.
func FuzzBus(f *testing.F) {
	f.Add([]byte{0, 0, 8, 0, 6, 0})
	f.Add([]byte{1, 2, 0, 0, 6, 0, 6, 0, 5, 0, 6, 0})
	f.Add([]byte{3, 9, 11, 0, 4, 0, 6, 0, 14, 0})
	f.Add([]byte{2, 8, 0, 0, 6, 0, 6, 0, 7, 0, 6, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 400 {
			ops = ops[:400]
		}
		real, model := runReal(ops), runModel(ops)
		if !slices.Equal(real.calls, model.calls) {
			t.Fatalf("calls:\nbus   %v\nmodel %v", real.calls, model.calls)
		}
		if !slices.Equal(real.panics, model.panics) {
			t.Fatalf("panic reports:\nbus   %q\nmodel %q", real.panics, model.panics)
		}
	})
}

type fuzzOutcome struct {
	calls  []int    // subscription ids, in call order
	panics []string // "topic:id" per reported panic
}

// fuzzSteps is what the steps of ops do, on the bus or on the model.
type fuzzSteps struct {
	on    func(fuzzHandler)
	off   func(arg int) // the subscription arg modulo how many there are
	emit  func(topic string, arg byte)
	close func()
}

// decode runs ops as steps: each step is two bytes, kind and argument.
func decode(ops []byte, s fuzzSteps) {
	for i := 0; i+1 < len(ops); i += 2 {
		kind, topic, arg := int(ops[i]&7), int(ops[i]>>3)%len(fuzzTopics), ops[i+1]
		switch kind {
		case 0, 1, 2:
			s.on(handlerFor(topic, arg))
		case 3, 4:
			s.off(int(arg))
		case 5, 6:
			s.emit(fuzzTopics[topic], arg)
		case 7:
			if arg == 0 {
				s.close()
			}
		}
	}
}

func handlerFor(topic int, arg byte) fuzzHandler {
	return fuzzHandler{
		topic:  fuzzTopics[topic],
		act:    int(arg) % numActs,
		arg:    int(arg) / numActs,
		topic2: fuzzTopics[int(arg)%len(fuzzTopics)],
	}
}

// Nested Emits multiply calls; these bounds keep one input fast. Both sides
// apply them at the same points, so the sequences stay comparable.
const (
	maxFuzzDepth = 3
	maxFuzzCalls = 2000
	maxFuzzSubs  = 256
)

func mayEmit(depth int, out *fuzzOutcome) bool {
	return depth < maxFuzzDepth && len(out.calls) < maxFuzzCalls
}

func runReal(ops []byte) fuzzOutcome {
	var out fuzzOutcome
	b := New()
	var offs []func()
	depth := 0
	b.SetPanicHook(func(topic string, v any) { out.panics = append(out.panics, fmt.Sprintf("%s:%v", topic, v)) })

	var subscribe func(h fuzzHandler)
	subscribe = func(h fuzzHandler) {
		id := len(offs)
		offs = append(offs, nil)
		offs[id] = b.On(h.topic, func(any) {
			out.calls = append(out.calls, id)
			switch h.act {
			case actOff:
				offs[h.arg%len(offs)]()
			case actOn:
				if len(offs) < maxFuzzSubs {
					subscribe(fuzzHandler{topic: h.topic2})
				}
			case actEmit:
				if mayEmit(depth, &out) {
					depth++
					b.Emit(h.topic2, nil)
					depth--
				}
			case actPanic:
				panic(id)
			case actClose:
				b.Close()
			}
		})
	}
	decode(ops, fuzzSteps{
		on: subscribe,
		off: func(arg int) {
			if len(offs) > 0 {
				offs[arg%len(offs)]()
			}
		},
		emit:  func(topic string, arg byte) { b.Emit(topic, arg) },
		close: b.Close,
	})
	return out
}

type modelSub struct {
	h       fuzzHandler
	removed bool
}

func runModel(ops []byte) fuzzOutcome {
	var out fuzzOutcome
	var subs []*modelSub
	closed := false
	depth := 0

	subscribe := func(h fuzzHandler) {
		// A closed bus hands out a no-op off; the id is still used up.
		subs = append(subs, &modelSub{h: h, removed: closed})
	}
	var emit func(topic string)
	emit = func(topic string) {
		if closed {
			return
		}
		var snapshot []int
		for id, s := range subs {
			if s.h.topic == topic && !s.removed {
				snapshot = append(snapshot, id)
			}
		}
		for _, id := range snapshot {
			if closed {
				return
			}
			s := subs[id]
			if s.removed {
				continue
			}
			out.calls = append(out.calls, id)
			switch s.h.act {
			case actOff:
				subs[s.h.arg%len(subs)].removed = true
			case actOn:
				if len(subs) < maxFuzzSubs {
					subscribe(fuzzHandler{topic: s.h.topic2})
				}
			case actEmit:
				if mayEmit(depth, &out) {
					depth++
					emit(s.h.topic2)
					depth--
				}
			case actPanic:
				out.panics = append(out.panics, fmt.Sprintf("%s:%d", topic, id))
			case actClose:
				closed = true
			}
		}
	}
	decode(ops, fuzzSteps{
		on: subscribe,
		off: func(arg int) {
			if len(subs) > 0 {
				subs[arg%len(subs)].removed = true
			}
		},
		emit:  func(topic string, _ byte) { emit(topic) },
		close: func() { closed = true },
	})
	return out
}
