package bus

import (
	"testing"

	EventBus "github.com/asaskevich/EventBus"
)

var benchSink int

//go:noinline
func benchHandler(p any) {
	if n, ok := p.(int); ok {
		benchSink += n
	}
}

// BenchmarkEmit compares one Emit to one handler with the same handler
// called through a raw EventBus Publish and called directly.
func BenchmarkEmit(b *testing.B) {
	var payload any = 1
	b.Run("bus.Emit", func(b *testing.B) {
		bus := New()
		bus.On("t", benchHandler)
		b.ReportAllocs()
		for b.Loop() {
			bus.Emit("t", payload)
		}
	})
	b.Run("EventBus.Publish", func(b *testing.B) {
		eb := EventBus.New()
		eb.Subscribe("t", benchHandler)
		b.ReportAllocs()
		for b.Loop() {
			eb.Publish("t", payload)
		}
	})
	b.Run("direct", func(b *testing.B) {
		fn := benchHandler
		b.ReportAllocs()
		for b.Loop() {
			fn(payload)
		}
	})
}

func BenchmarkEmitParallel(b *testing.B) {
	bus := New()
	bus.On("t", func(any) {})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bus.Emit("t", nil)
		}
	})
}

// BenchmarkOnOff is the price of a subscription change with 8 other
// handlers on the topic.
func BenchmarkOnOff(b *testing.B) {
	bus := New()
	for range 8 {
		bus.On("t", func(any) {})
	}
	b.ReportAllocs()
	for b.Loop() {
		bus.On("t", benchHandler)()
	}
}
