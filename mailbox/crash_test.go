package mailbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// crashEnv names the file the helper process posts to; when it is unset
// TestCrashHelperProcess is skipped.
const crashEnv = "DIAGRELAY_MAILBOX_CRASH_FILE"

// crashRecipientsEnv, if set to a number n > 2, makes the helper post
// from n goroutines, each to a recipient of its own (/root/p<i>), so that
// a commit holds posts for many recipients; else 8 goroutines post to
// /root and /k.
const crashRecipientsEnv = "DIAGRELAY_MAILBOX_CRASH_RECIPIENTS"

// crashCheckpointEnv, if set, is the helper's checkpointAt in bytes (so
// that checkpoints come often), and crashStageEnv, if set, a checkpoint
// stage (see checkpointing) at which the helper's third checkpoint prints
// "STAGE <stage>" and stops, for the parent to kill it there.
// crashAckEnv, if set, makes the helper ack what it reads, printing
// "ACKING text" before each Ack and "ACK text" once it has returned.
const (
	crashCheckpointEnv = "DIAGRELAY_MAILBOX_CRASH_CHECKPOINT_AT"
	crashStageEnv      = "DIAGRELAY_MAILBOX_CRASH_STAGE"
	crashAckEnv        = "DIAGRELAY_MAILBOX_CRASH_ACK"
)

// crashRecipients is the helper's recipients for n (see crashRecipientsEnv).
func crashRecipients(n int) []string {
	if n <= 2 {
		return []string{"/root", "/k"}
	}
	rs := make([]string, n)
	for i := range rs {
		rs[i] = fmt.Sprintf("/root/p%d", i)
	}
	return rs
}

// TestCrashHelperProcess is not a test: TestCrashDurability runs it in a
// subprocess. Eight goroutines post in a loop and print each message's
// text once its Post has returned, until the process is killed.
func TestCrashHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process for TestCrashDurability")
	}
	if at, err := strconv.ParseInt(os.Getenv(crashCheckpointEnv), 10, 64); err == nil {
		checkpointAt = at
	}
	var out sync.Mutex
	if stage := os.Getenv(crashStageEnv); stage != "" {
		n := 0
		checkpointing = func(at string) {
			if at == stage {
				if n++; n == 3 {
					out.Lock()
					os.Stdout.WriteString("STAGE " + stage + "\n")
					select {} // killed here
				}
			}
		}
	}
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Getenv(crashRecipientsEnv))
	recipients := crashRecipients(n)
	if os.Getenv(crashAckEnv) != "" {
		// say prints word and each entry's text, a line each, in one write.
		say := func(word string, es []Entry) {
			var b strings.Builder
			for _, e := range es {
				text, _, _ := strings.Cut(e.Message, " #")
				b.WriteString(word + " " + text + "\n")
			}
			out.Lock()
			os.Stdout.WriteString(b.String())
			out.Unlock()
		}
		go func() {
			for {
				for _, r := range recipients {
					es, err := s.Read(r, 50)
					if err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(3)
					}
					es = es[:min(len(es), len(es)/2+1)]
					say("ACKING", es)
					if _, err := s.Ack(r, ids(es)); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(3)
					}
					say("ACK", es)
				}
			}
		}()
	}
	for g := range max(8, len(recipients)) {
		go func() {
			recipient := recipients[g%len(recipients)]
			for i := 0; ; i++ {
				text := fmt.Sprintf("g%d-%d", g, i)
				if err := s.Post(msg(recipient, recipient+"/child", text, i)); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				out.Lock()
				os.Stdout.WriteString(recipient + " " + text + "\n") // one write: atomic on a pipe
				out.Unlock()
			}
		}()
	}
	time.Sleep(30 * time.Second) // the parent kills us long before
	os.Exit(4)
}

// Every Post that returned before a SIGKILL is in the file exactly once,
// and the file opens cleanly and passes bbolt's consistency check.
func TestCrashDurability(t *testing.T) { crashDurability(t, 2, nil) }

// The same with 64 posters to 64 recipients: each commit of the log
// (docs/mailbox.md) holds many recipients' entries, and the index rebuilt
// at Open finds each under its own.
func TestCrashDurabilityManyRecipients(t *testing.T) { crashDurability(t, 64, nil) }

// With checkpoints every 16 KiB of log and a reader acking half of what
// it reads: the kill lands between commits of the log and checkpoints,
// and an entry whose Ack returned never comes back.
func TestCrashBetweenCheckpoints(t *testing.T) {
	crashDurability(t, 8, []string{crashCheckpointEnv + "=16384", crashAckEnv + "=1"})
}

// Killed inside a checkpoint: its transaction written but not committed
// (replay brings the log back), and committed but the log not yet begun
// again (replay must skip the whole log: nothing twice).
func TestCrashDuringCheckpoint(t *testing.T) {
	for _, stage := range []string{"written", "committed"} {
		t.Run(stage, func(t *testing.T) {
			crashDurability(t, 8, []string{crashCheckpointEnv + "=16384", crashAckEnv + "=1", crashStageEnv + "=" + stage})
		})
	}
}

func crashDurability(t *testing.T, nRecipients int, env []string) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	path := filepath.Join(t.TempDir(), "mailbox.db")
	env = append([]string{crashEnv + "=" + path, crashRecipientsEnv + "=" + strconv.Itoa(nRecipients)}, env...)
	p := testutil.StartSubprocess(t, "TestCrashHelperProcess", env...)
	defer p.Kill() // if the test fails before the timer does it
	// Kill after the first acknowledged posts plus a while, mid-stream,
	// or when the helper says it stopped in a checkpoint.
	atStage := slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, crashStageEnv+"=") })
	acked := map[string]string{} // text -> recipient
	gone := map[string]bool{}    // texts whose Ack returned
	going := map[string]bool{}   // texts whose Ack was called
	var timer *time.Timer
	stopped := false
	for p.Stdout.Scan() {
		line := p.Stdout.Text()
		if rest, ok := strings.CutPrefix(line, "ACKING "); ok {
			going[rest] = true
			continue
		}
		if rest, ok := strings.CutPrefix(line, "ACK "); ok {
			gone[rest] = true
			continue
		}
		if strings.HasPrefix(line, "STAGE ") {
			stopped = true
			p.Kill()
			continue
		}
		recipient, text, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("helper printed %q", line)
		}
		acked[text] = recipient
		if timer == nil && !atStage {
			timer = time.AfterFunc(500*time.Millisecond, p.Kill)
		}
	}
	p.WaitKilled(t)
	if atStage && !stopped {
		t.Fatal("the helper was killed, but not in the checkpoint")
	}
	if len(acked) < 10 {
		t.Fatalf("only %d posts acknowledged before the kill; stderr:\n%s", len(acked), p.Stderr())
	}

	s, err := Open(path, WithLockTimeout(0))
	if err != nil {
		t.Fatalf("reopening after the crash: %v", err)
	}
	defer s.Close()
	if err := s.view(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("bbolt check after the crash: %v", err)
	}
	found := map[string]int{}
	for _, r := range crashRecipients(nRecipients) {
		for {
			es := mustRead(t, s, r, MaxReadLimit)
			if len(es) == 0 {
				break
			}
			for _, e := range es {
				if e.Recipient != r {
					t.Fatalf("entry for %q read under %q", e.Recipient, r)
				}
				text, _, _ := strings.Cut(e.Message, " #")
				found[text]++
				if want, ok := acked[text]; ok && want != r {
					t.Fatalf("%s posted to %s, found under %s", text, want, r)
				}
			}
			mustAck(t, s, r, ids(es), len(es))
		}
	}
	for text, n := range found {
		if n != 1 {
			t.Errorf("%s stored %d times", text, n)
		}
		if gone[text] {
			t.Errorf("%s was acknowledged (its Ack returned) but is back", text)
		}
	}
	for text := range acked {
		if found[text] != 1 && !going[text] {
			t.Errorf("%s acknowledged by Post but not in the file", text)
		}
	}
	t.Logf("%d posts acknowledged, %d of them acked by the reader, %d in the file (the rest were in flight)", len(acked), len(gone), len(found))
}
