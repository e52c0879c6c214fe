package sanitize_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/diagrelay/diagrelay/sanitize"
)

func ExampleMessage() {
	fmt.Printf("%q\n", sanitize.Message("build \x1b[31mfailed\x1b[0m:\n\texit status 1"))
	fmt.Printf("%q\n", sanitize.Message("title\x1b]0;pwned\x07 \u202Eevil"))
	fmt.Println(len([]rune(sanitize.Message(strings.Repeat("x", 5000)))))
	// Output:
	// "build failed: exit status 1"
	// "title evil"
	// 1000
}

func ExampleSource() {
	fmt.Println(sanitize.Source("  lint\u200B-check  "))
	fmt.Println(sanitize.Source(strings.Repeat("very-long-extension-name-", 4)))
	// Output:
	// lint-check
	// very-long-extension-name-very-long-extension-name-very-long-extension-name-very…
}

func ExampleClean() {
	fmt.Println(sanitize.Clean("🏳️‍🌈 e\u0301t\u00E9 \xff", 0))
	fmt.Println(sanitize.Clean("👨‍👩‍👧‍👦 family portrait", 14))
	// Output:
	// 🏳️‍🌈 été �
	// 👨‍👩‍👧👦 fa…
}

func ExampleWriter() {
	w := sanitize.NewWriter(os.Stdout, 0)
	w.Write([]byte("one \x1b[1mbo"))
	w.Write([]byte("ld\x1b[0m \xe2\x9c"))
	w.Write([]byte("\x93 done\n"))
	w.Close()
	fmt.Println()
	// Output:
	// one bold ✓ done
}

// One Writer serves a text after another: Close ends each.
func ExampleWriter_Close() {
	var out strings.Builder
	w := sanitize.NewWriter(&out, sanitize.SourceLimit)
	for _, name := range []string{"lint\x1b[0m", "  \u202Eformat  ", "\x1b]0;x\x07"} {
		w.Write([]byte(name))
		w.Close()
		out.WriteString("|")
	}
	fmt.Println(out.String())
	// Output:
	// lint|format||
}
