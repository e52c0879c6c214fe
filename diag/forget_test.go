package diag

import "testing"

// A report whose delivery failed is forgotten: its retry is delivered, yet
// it keeps its window slot and its place under the cap.
func TestForget(t *testing.T) {
	g := NewGate()
	r := distinct(0)
	admit(t, g, r, sec(0), Delivered)
	if !g.Forget(r) {
		t.Fatal("Forget did not find a delivered report")
	}
	if g.Forget(r) || g.Forget(distinct(1)) || g.Forget(Report{"bad", "x", ""}) {
		t.Fatal("Forget found a report it should not have")
	}
	for i := 1; i < MaxPerWindow; i++ {
		admit(t, g, distinct(i), sec(0), Delivered)
	}
	admit(t, g, r, sec(0), DropRate) // the forgotten one still holds its slot
	admit(t, g, r, sec(10), Delivered)
	admit(t, g, r, sec(10), DropDuplicate)
	for i := MaxPerWindow; i < MaxPerGeneration-1; i++ {
		admit(t, g, distinct(i), sec(float64(10+2*i)), Delivered)
	}
	admit(t, g, distinct(99), sec(1000), DropCap) // 20 deliveries, the forgotten one among them
	if c := g.Counts(); c.Delivered != MaxPerGeneration {
		t.Fatalf("Counts = %+v", c)
	}
}
