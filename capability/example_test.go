package capability_test

import (
	"fmt"

	"github.com/diagrelay/diagrelay/capability"
)

// A reply that arrived some other way, here decoded from JSON, is judged
// with Compatible.
func ExampleCompatible() {
	reply := map[string]any{"version": "v1.2.0-rc.1", "protocol": float64(1)}
	_, ok := capability.Compatible(reply, "1.1.0")
	fmt.Println(ok)
	// A pre-release sorts before its release.
	_, ok = capability.Compatible(reply, "1.2.0")
	fmt.Println(ok)
	// The legacy argument-free reply.
	_, ok = capability.Compatible(nil, "")
	fmt.Println(ok)
	// Output:
	// true
	// false
	// false
}
