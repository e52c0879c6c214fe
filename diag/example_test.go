package diag_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

func ExampleParse() {
	// What a JSON bridge hands the listener: a map[string]any. The thread
	// key is ignored; the escape sequence and the tab are cleaned away.
	var payload any
	_ = json.Unmarshal([]byte(`{
		"level": "warning",
		"source": "lint",
		"message": "\u001b[31m3 files\tnot formatted\u001b[0m",
		"thread": "/root"
	}`), &payload)
	r, err := diag.Parse(payload)
	fmt.Printf("%+v %v\n", r, err)

	_, err = diag.Parse(map[string]any{"level": "warn", "message": "x"})
	fmt.Println(err, errors.Is(err, diag.ErrInvalid))

	_, err = diag.Parse(42)
	fmt.Println(err)
	// Output:
	// {Level:warning Message:3 files not formatted Source:lint} <nil>
	// diag: level "warn" is not info, warning or error true
	// diag: payload is int, want diag.Report, *diag.Report or map[string]any
}

func ExampleGate() {
	g := diag.NewGate()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // use a monotonic clock in real code
	report := func(n int) diag.Report {
		return diag.Report{Level: diag.Info, Message: fmt.Sprintf("step %d done", n)}
	}
	for _, a := range []struct {
		after time.Duration
		r     diag.Report
	}{
		{0, report(1)},
		{0, report(1)}, // a duplicate uses no window slot
		{1 * time.Second, report(2)},
		{1 * time.Second, report(3)},
		{2 * time.Second, report(4)},
		{2 * time.Second, report(5)},
		{9999 * time.Millisecond, report(6)}, // the 6th within 10 s of the 1st
		{10 * time.Second, report(6)},        // the 1st has left the window
		{10 * time.Second, report(7)},        // the 2nd and 3rd have not
		{11 * time.Second, report(7)},
		{-time.Hour, report(8)}, // the clock went backwards: fail closed
		{20 * time.Second, diag.Report{Level: "debug", Message: "x"}},
	} {
		fmt.Printf("%-7v %-14q %v\n", a.after, a.r.Message, g.Admit(a.r, start.Add(a.after)))
	}
	fmt.Printf("%+v\n", g.Counts())
	// Output:
	// 0s      "step 1 done"  delivered
	// 0s      "step 1 done"  duplicate
	// 1s      "step 2 done"  delivered
	// 1s      "step 3 done"  delivered
	// 2s      "step 4 done"  delivered
	// 2s      "step 5 done"  delivered
	// 9.999s  "step 6 done"  rate
	// 10s     "step 6 done"  delivered
	// 10s     "step 7 done"  rate
	// 11s     "step 7 done"  delivered
	// -1h0m0s "step 8 done"  rate
	// 20s     "x"            invalid
	// {Delivered:7 Dropped:{Duplicate:1 Rate:3 Cap:0 Invalid:1}}
}
