// Package testtext makes the texts the benchmarks and tests run on:
// deterministic, so every run and every package measures the same bytes.
package testtext

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Log is n bytes of log lines of the kinds a build, a test run and a
// service print, without a secret; with secretEvery > 0 a line with a
// fake credential of a rotating format stands about every secretEvery
// bytes.
func Log(n, secretEvery int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	// pick is k characters of alphabet.
	pick := func(alphabet string, k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	p := func(k int) string { return pick(alnum, k) }
	// Secret bodies without vowels, so that no stopword of upstream's
	// generic rule sits in one by chance.
	q := func(k int) string { return pick("BCDFGHJKLMNPQRSTVWXZbcdfghjklmnpqrstvwxz0123456789", k) }
	hex := func(k int) string { return pick("0123456789abcdef", k) }
	lines := []func() string{
		func() string {
			return fmt.Sprintf("2026-12-01T19:%02d:%02d.%03dZ INFO http: GET /api/v1/users/%d 200 in %dms", rng.IntN(60), rng.IntN(60), rng.IntN(1000), rng.IntN(9999), rng.IntN(500))
		},
		func() string {
			return fmt.Sprintf("ok   github.com/acme/api/internal/auth	%d.%03ds", rng.IntN(9), rng.IntN(1000))
		},
		func() string { return "lint: task build-api finished; 4 files changed, they passed the access check" },
		func() string {
			return fmt.Sprintf("commit %s: fix token cache eviction (#%d)", hex(40), rng.IntN(9999))
		},
		func() string {
			return fmt.Sprintf("worker %d: key order kept, %d keys scanned, disk usage %d%%", rng.IntN(16), rng.IntN(100000), rng.IntN(100))
		},
		func() string {
			return fmt.Sprintf("WARN retry %d/5: dial tcp 127.0.0.1:%d: connect: connection refused", rng.IntN(5)+1, 1024+rng.IntN(60000))
		},
		func() string {
			return fmt.Sprintf("request id %s-%s-4%s-a%s-%s done", hex(8), hex(4), hex(3), hex(3), hex(12))
		},
		func() string {
			return "auth: using default credentials from the environment; secret rotation in 3 days."
		},
		func() string {
			return fmt.Sprintf("/home/dev/go/pkg/mod/golang.org/x/text@v0.44.0/unicode/norm/normalize.go:%d: inlining call", rng.IntN(600))
		},
	}
	secrets := []func() string{
		func() string { return "error: auth failed with token ghp_" + p(36) + " for repo acme/api" },
		func() string { return "db: dial postgres://app:" + p(16) + "@db.internal:5432/app: timeout" },
		func() string { return "payment failed: sk_live_" + p(24) + ", retrying" },
		func() string { return "loaded config api_key=" + q(28) + "9x from env" },
		func() string {
			return "s3: InvalidAccessKeyId AKIA" + strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return 'A' + r - '0'
				}
				return r
			}, strings.ToUpper(q(16))) + " in us-east-1"
		},
	}
	var b bytes.Buffer
	next := secretEvery
	for si := 0; b.Len() < n; {
		if secretEvery > 0 && b.Len() >= next {
			b.WriteString(secrets[si%len(secrets)]())
			si++
			next += secretEvery
		} else {
			b.WriteString(lines[rng.IntN(len(lines))]())
		}
		b.WriteByte('\n')
	}
	return b.Bytes()[:n]
}
