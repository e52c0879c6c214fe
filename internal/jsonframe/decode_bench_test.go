package jsonframe

import (
	"testing"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// reportFrame is a child's report as the cost benchmarks send it
// (cmd/diagrelay, BenchmarkServeCost).
var reportFrame = []byte(`{"jsonrpc":"2.0","id":3,"method":"diagnostic.report","params":{"level":"warning","source":"build","message":"step 2 of /root/one0-c0/r7: cache miss for module 838, fetched in 12 ms"}}`)

// BenchmarkDecodeReport is one report frame's strict check and its params'
// decoding, as the service does both for every report.
//
//	go test -run '^$' -bench DecodeReport -benchmem ./internal/jsonframe
func BenchmarkDecodeReport(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(reportFrame)))
	for b.Loop() {
		req, _, rerr := Decode(reportFrame)
		if rerr != nil {
			b.Fatal(rerr)
		}
		var p wire.ReportParams
		if rerr := DecodeParams(req.Params, &p); rerr != nil || p.Message == nil {
			b.Fatal(rerr)
		}
	}
}
