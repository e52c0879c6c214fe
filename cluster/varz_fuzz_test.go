package cluster

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"
)

// FuzzVarz holds the decoder of a monitoring endpoint's varz (whoever
// answers on the URL can send it anything): no input panics, and what is
// accepted names a JetStream server, its peers are named, sorted, unique and
// bounded, and it decodes again to itself.
func FuzzVarz(f *testing.F) {
	f.Add([]byte(`{"server_id":"NABC","server_name":"n1","jetstream":{"config":{"sync_always":true}}}`))
	f.Add([]byte(`{"server_id":"NABC","server_name":"n1","version":"2.15.2","jetstream":{"config":{"max_memory":1,"store_dir":"/x","sync_always":true},` +
		`"meta":{"name":"diagrelay","leader":"n2","peer":"x","replicas":[{"name":"n2","current":true,"active":123,"peer":"a"},{"name":"n3","current":false,"offline":true,"active":0,"peer":"b"}],` +
		`"cluster_size":3,"quorum_needed":2,"pending":0,"snapshot":null}}}`))
	f.Add([]byte(`{"server_id":"NABC","jetstream":{}}`))
	f.Add([]byte(`{"server_id":"NABC","server_id":"NDEF","jetstream":{"config":{}}}`))
	f.Add([]byte(`{"SERVER_ID":"NABC","jetstream":{"config":{"sync_always":true}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseVarz(bytes.NewReader(b))
		if err != nil {
			return
		}
		if v.ServerID == "" || v.ServerName == "" || v.JetStream == nil || v.JetStream.Config == nil {
			t.Fatalf("accepted %+v", v)
		}
		p := v.peers()
		if len(p) > maxPeers+2 || !slices.IsSorted(p) || len(slices.Compact(slices.Clone(p))) != len(p) || slices.Contains(p, "") {
			t.Fatalf("peers %q", p)
		}
		if len(p) > 0 && !slices.Contains(p, v.ServerName) {
			t.Fatalf("peers %q without the server itself, %s", p, v.ServerName)
		}
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseVarz(bytes.NewReader(enc))
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("%+v does not decode to itself: %+v, %v", v, again, err)
		}
	})
}
