// Package livedemo is `diagrelay demo --watch`: the demo's session tree on
// the real clock, through an embedded serve on a private socket, shown
// live by watch. The children are real socket clients; what they report
// goes through the service exactly as a child process's would.
package livedemo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/demo"
	"github.com/diagrelay/diagrelay/internal/serve"
	"github.com/diagrelay/diagrelay/internal/watch"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// Options say where the demo is shown and how fast it plays.
type Options struct {
	In  io.Reader
	Out io.Writer
	// TUI shows the full-screen view until q; otherwise the plain lines of
	// the script's events are printed, and Run returns when it has played.
	TUI bool
	// Pace scales the script's times (0 means 1, the real pace); tests
	// play it faster.
	Pace float64
}

// tick is how often, after the script, a child reports again so that the
// view stays live.
const tick = 3 * time.Second

// Run starts the embedded serve, plays the script and shows it. Its error
// says what failed: the setup, the script or the view.
func Run(o Options) (err error) {
	if o.Pace == 0 {
		o.Pace = 1
	}
	dir, err := os.MkdirTemp("", "diagrelay-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := mailbox.Open(filepath.Join(dir, datadir.MailboxFile))
	if err != nil {
		return err
	}
	defer store.Close()
	token := service.NewToken()
	srv := service.New(service.Config{Mailbox: store, HostToken: token})
	socket := filepath.Join(dir, "s")
	l, err := serve.Listen(socket)
	if err != nil {
		return err
	}
	go srv.Serve(l)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()

	host, err := watch.Dial(socket, token)
	if err != nil {
		return err
	}
	defer host.Close()
	view, err := watch.Dial(socket, token)
	if err != nil {
		return err
	}
	defer view.Close()
	// A signal ends the demo as q does, so that the clean-up above runs
	// (the temporary directory is removed): closing the view ends Follow;
	// the full-screen view ends on SIGINT and SIGTERM by itself.
	signaled, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stopSignals()
	go func() {
		<-signaled.Done()
		view.Close()
	}()

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var playErr error
	played := make(chan struct{})
	wg.Go(func() {
		defer close(played)
		playErr = play(ctx, host, socket, o.Pace, !o.TUI)
	})
	defer func() {
		stop()
		wg.Wait()
		err = errors.Join(playErr, err)
	}()
	if o.TUI {
		return watch.Screen(view, "diagrelay demo --watch (embedded serve)", o.In, o.Out)
	}
	// No terminal: the plain lines, until the script has played.
	go func() {
		<-played
		// A held-back summary is sent at most one token's time after the
		// last hold (relay's host-wide limit); then the last events reach
		// the view.
		time.Sleep(time.Duration(float64(time.Second)/float64(relay.DefaultNotifyRate)) + 200*time.Millisecond)
		view.Close()
	}()
	return watch.Follow(view, &watch.Printer{W: o.Out})
}

// play opens the tree and plays the script on the real clock at pace;
// with once false it then keeps one child reporting until ctx ends.
func play(ctx context.Context, host *watch.Conn, socket string, pace float64, once bool) error {
	children := map[string]*child{}
	defer func() {
		for _, c := range children {
			c.Close()
		}
	}()
	open := func(path, owner string) error {
		var res wire.OpenResult
		if err := host.Call(wire.MethodRuntimeOpen, wire.OpenParams{Path: path, Owner: owner}, &res); err != nil {
			return fmt.Errorf("runtime.open %s: %w", path, err)
		}
		if old := children[path]; old != nil {
			old.Close()
		}
		c, err := dialChild(socket, res.Token)
		if err != nil {
			return err
		}
		children[path] = c
		return nil
	}
	for _, t := range demo.Children() {
		if err := open(t.Path, t.Owner); err != nil {
			return err
		}
	}
	start := time.Now()
	wait := func(at time.Duration) bool {
		select {
		case <-time.After(time.Until(start.Add(time.Duration(float64(at) * pace)))):
			return true
		case <-ctx.Done():
			return false
		}
	}
	steps := script()
	for _, s := range steps {
		if !wait(s.at) {
			return nil
		}
		var err error
		switch s.do {
		case "reopen":
			err = open(s.thread, "")
		case "close":
			err = host.Call(wire.MethodRuntimeClose, wire.PathParams{Path: s.thread}, nil)
		default:
			err = children[s.thread].report(s.level, s.source, s.msg)
		}
		if err != nil {
			return err
		}
	}
	if once {
		return nil
	}
	at := steps[len(steps)-1].at
	live := []string{"/root/noisy", "/k/l", "/root/scout", "/k"}
	for n := 1; ; n++ {
		at += tick
		if !wait(at) {
			return nil
		}
		path := live[n%len(live)]
		// A refused report (the runtime capped, say) changes nothing here.
		_ = children[path].report([]string{"info", "warning", "error"}[n%3], "tick", fmt.Sprintf("still working: step %d", n))
	}
}
