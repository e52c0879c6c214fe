package bus_test

import (
	"fmt"

	"github.com/diagrelay/diagrelay/bus"
)

func Example() {
	b := bus.New()
	defer b.Close()

	off := b.On("greeting", func(p any) { fmt.Println("first:", p) })
	b.On("greeting", func(p any) {
		fmt.Println("second:", p)
		// Handlers may use the bus they run on: no lock is held.
		b.Emit("echo", p)
	})
	b.On("echo", func(p any) { fmt.Println("echo:", p) })

	b.Emit("greeting", "hello")
	off()
	b.Emit("greeting", nil) // any payload, nil included
	// Output:
	// first: hello
	// second: hello
	// echo: hello
	// second: <nil>
	// echo: <nil>
}

func ExampleBus_SetPanicHook() {
	b := bus.New()
	b.SetPanicHook(func(topic string, recovered any) {
		fmt.Printf("handler on %q panicked: %v\n", topic, recovered)
	})
	b.On("t", func(any) { panic("boom") })
	b.On("t", func(any) { fmt.Println("still delivered") })
	b.Emit("t", nil)
	fmt.Println("the emitter carries on")
	// Output:
	// handler on "t" panicked: boom
	// still delivered
	// the emitter carries on
}
