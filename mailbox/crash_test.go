package mailbox

import (
	"fmt"
	"os"
	"path/filepath"
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
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Getenv(crashRecipientsEnv))
	recipients := crashRecipients(n)
	var out sync.Mutex
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
func TestCrashDurability(t *testing.T) { crashDurability(t, 2) }

// The same with 64 posters to 64 recipients: each commit of the log
// (docs/mailbox.md) holds many recipients' entries, and the index rebuilt
// at Open finds each under its own.
func TestCrashDurabilityManyRecipients(t *testing.T) { crashDurability(t, 64) }

func crashDurability(t *testing.T, nRecipients int) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	path := filepath.Join(t.TempDir(), "mailbox.db")
	p := testutil.StartSubprocess(t, "TestCrashHelperProcess", crashEnv+"="+path, crashRecipientsEnv+"="+strconv.Itoa(nRecipients))
	// Kill after the first acknowledged posts plus a while, mid-stream.
	acked := map[string]string{} // text -> recipient
	var timer *time.Timer
	for p.Stdout.Scan() {
		recipient, text, ok := strings.Cut(p.Stdout.Text(), " ")
		if !ok {
			t.Fatalf("helper printed %q", p.Stdout.Text())
		}
		acked[text] = recipient
		if timer == nil {
			timer = time.AfterFunc(500*time.Millisecond, p.Kill)
		}
	}
	p.WaitKilled(t)
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
	}
	for text := range acked {
		if found[text] != 1 {
			t.Errorf("%s acknowledged by Post but not in the file", text)
		}
	}
	t.Logf("%d posts acknowledged, %d in the file (the rest were in flight)", len(acked), len(found))
}
