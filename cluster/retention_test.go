package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// TestHomePurgesWhatItAcknowledged: the stream has limits retention, so an
// acknowledgement writes nothing to it, and the home purges the reports it
// acknowledged (every PruneEvery), so the stream does not fill with them.
func TestHomePurgesWhatItAcknowledged(t *testing.T) {
	ns := natstest.Start(t)
	home := startHome(t, ns)
	edge := startEdge(t, ns, "e1")
	rt, err := home.host.Open("/root/p", client.OpenOptions{Parent: "/root"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := dialRaw(t, edge.sock, rt.Token)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"one", "two", "three"} {
		if err := c.report("warning", m, ""); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 10*time.Second, "the home delivers the reports", func() bool { return home.h.Stats().Delivered == 3 })
	var si *jetstream.StreamInfo
	testutil.EventuallyShow(t, 10*time.Second, func() bool {
		si, err = home.h.l.stream.Info(t.Context())
		return err == nil && si.State.Msgs == 0
	}, func() string { return "the acknowledged reports stay in the stream: " + stateOf(si, err) })
	if si.Config.Retention != jetstream.LimitsPolicy {
		t.Errorf("retention %v, want limits", si.Config.Retention)
	}
	if si.State.LastSeq < 3 {
		t.Errorf("the stream's last sequence %d: the reports never reached it", si.State.LastSeq)
	}
}

func stateOf(si *jetstream.StreamInfo, err error) string {
	if err != nil || si == nil {
		return fmt.Sprint("no info: ", err)
	}
	return fmt.Sprintf("msgs %d, first %d, last %d", si.State.Msgs, si.State.FirstSeq, si.State.LastSeq)
}

// TestHomeKeepsAWorkQueueStream: a stream made with work-queue retention
// cannot be changed to limits, and deleting it could lose what an edge just
// published: the home keeps it as it is and says so.
func TestHomeKeepsAWorkQueueStream(t *testing.T) {
	ns := natstest.Start(t)
	js := ns.JetStream(t)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: StreamName, Subjects: []string{ReportSubject + ".*", CountsSubject + ".*"},
		Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy, Discard: jetstream.DiscardNew,
		MaxBytes: DefaultStreamBytes, MaxMsgSize: maxMessageBytes, Duplicates: DefaultDuplicates}); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	h, err := NewHome(context.Background(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	si, err := h.l.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if si.Config.Retention != jetstream.WorkQueuePolicy {
		t.Errorf("retention %v, want the work queue it was made with", si.Config.Retention)
	}
	if !strings.Contains(log.String(), "work-queue retention") {
		t.Errorf("the home did not say so:\n%s", log)
	}
}
