package redact

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// leak is a fake credential in the context a diagnostic would put it.
type leak struct {
	name, text string
	secrets    []string // none may survive
}

// likelyLeaks are the 30 formats a diagnostic is likeliest to leak, with
// fresh random bodies in each format.
func likelyLeaks(rng *rand.Rand) []leak {
	p := func(a string, n int) string { return pick(rng, a, n) }
	akid := "AKIA" + p(upper+"234567", 16)
	awsSecret := p(b64, 40)
	gcp := "AIza" + p(urlB64, 35)
	pemBody := func(n int) string {
		var lines []string
		for range n {
			lines = append(lines, p(b64, 64))
		}
		return strings.Join(lines, `\n`)
	}
	rsa := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.ReplaceAll(pemBody(6), `\n`, "\n") + "\n-----END RSA PRIVATE KEY-----"
	sa := `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n` + pemBody(5) + `\n-----END PRIVATE KEY-----\n", "client_email": "x@y.iam.gserviceaccount.com"}`
	ssh := "-----BEGIN OPENSSH PRIVATE KEY----- " + strings.ReplaceAll(pemBody(4), `\n`, " ") + " -----END OPENSSH PRIVATE KEY-----"
	azureKey := p(b64, 86) + "=="
	ghp := "ghp_" + p(alnum, 36)
	fine := "github_pat_" + p(alnum, 22) + "_" + p(alnum, 59)
	gho := "gho_" + p(alnum, 36)
	glpat := "glpat-" + p(urlB64, 20)
	xoxb := "xoxb-" + p(digits, 12) + "-" + p(digits, 13) + "-" + p(alnum, 24)
	slackHook := "https://hooks.slack.com/services/T" + p(upper+digits, 10) + "/B" + p(upper+digits, 10) + "/" + p(alnum, 24)
	discordHook := "https://discord.com/api/webhooks/" + p(digits, 19) + "/" + p(urlB64, 68)
	uuid := func() string {
		return p(hexLo, 8) + "-" + p(hexLo, 4) + "-" + p(hexLo, 4) + "-" + p(hexLo, 4) + "-" + p(hexLo, 12)
	}
	teams := "https://acme.webhook.office.com/webhookb2/" + uuid() + "@" + uuid() + "/IncomingWebhook/" + p(hexLo, 32) + "/" + uuid()
	stripe := "sk_live_" + p(alnum, 24)
	rk := "rk_live_" + p(alnum, 24)
	openai := "sk-proj-" + p(urlB64, 74) + "T3BlbkFJ" + p(urlB64, 74)
	anthropic := "sk-ant-api03-" + p(urlB64, 93) + "AA"
	hf := "hf_" + p(upper+lower, 34)
	groq := "gsk_" + p(alnum, 52)
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + p(alnum, 40) + "." + p(urlB64, 43)
	npm := "npm_" + p(alnum, 36)
	pypi := "pypi-AgEIcHlwaS5vcmc" + p(urlB64, 70)
	pgPass := p(alnum, 16)
	mongoPass := p(alnum, 20)
	redisPass := p(alnum, 24)
	bearer := p(urlB64, 40)
	docker := "dckr_pat_" + p(urlB64, 27)
	sendgrid := "SG." + p(urlB64, 22) + "." + p(urlB64, 43)
	return []leak{
		{"aws access key id", "s3: InvalidAccessKeyId for " + akid + " in us-east-1", []string{akid}},
		{"aws secret access key", "loaded aws_secret_access_key = " + awsSecret + " from env", []string{awsSecret}},
		{"gcp api key", "maps: request denied for key " + gcp + " (quota)", []string{gcp}},
		{"gcp service account json", "credentials: " + sa, []string{pemBody(0) + "", sa[60:120]}},
		{"azure storage connection string", "blob: DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + azureKey + ";EndpointSuffix=core.windows.net", []string{azureKey}},
		{"github classic pat", "auth failed with token " + ghp + " for repo x", []string{ghp}},
		{"github fine-grained pat", "git push: GITHUB_TOKEN " + fine + " lacks scope", []string{fine}},
		{"github oauth token", "oauth: got " + gho + ", storing", []string{gho}},
		{"gitlab pat", "gitlab: 401 with PRIVATE-TOKEN " + glpat, []string{glpat}},
		{"slack bot token", "slack: invalid_auth for " + xoxb, []string{xoxb}},
		{"slack webhook", "notify: POST " + slackHook + " returned 404", []string{slackHook[len("https://hooks.slack.com/services/"):]}},
		{"discord webhook", "notify: POST " + discordHook + " returned 401", []string{discordHook[len("https://discord.com/api/webhooks/"):]}},
		{"teams webhook", "notify: POST " + teams + " returned 400", []string{teams[len("https://acme.webhook.office.com/webhookb2/"):]}},
		{"stripe secret key", "payment failed: " + stripe + ", retrying", []string{stripe}},
		{"stripe restricted key", "using restricted key " + rk + ".", []string{rk}},
		{"openai api key", "openai: 401 Incorrect API key provided: " + openai, []string{openai}},
		{"anthropic api key", "anthropic: x-api-key " + anthropic + " rejected", []string{anthropic}},
		{"huggingface token", "hub: download with " + hf + " failed", []string{hf}},
		{"groq api key", "groq: 401 for " + groq, []string{groq}},
		{"pem rsa private key", "tls: loaded key " + rsa, []string{rsa[40:100]}},
		{"openssh private key", "ssh: " + ssh, []string{ssh[40:100]}},
		{"jwt", "session: token " + jwt + " expired", []string{jwt}},
		{"npm token", "npm ERR! 403 //registry.npmjs.org/:_authToken=" + npm, []string{npm}},
		{"pypi token", "twine: upload with password " + pypi + " failed", []string{pypi}},
		{"postgres url", "db: connect postgres://app:" + pgPass + "@db.internal:5432/app: timeout", []string{pgPass}},
		{"mongodb srv url", "mongo: mongodb+srv://admin:" + mongoPass + "@cluster0.example.net/test failed", []string{mongoPass}},
		{"redis url", "cache: dial redis://:" + redisPass + "@10.0.0.5:6379/0: refused", []string{redisPass}},
		{"authorization header", "http: > Authorization: Bearer " + bearer, []string{bearer}},
		{"docker hub pat", "docker login -u ci -p " + docker + " failed", []string{docker}},
		{"sendgrid key", "mail: SENDGRID_API_KEY=" + sendgrid + " invalid", []string{sendgrid}},
	}
}

// notSecrets are texts a diagnostic carries that hold no secret.
func notSecrets(rng *rand.Rand) []string {
	p := func(a string, n int) string { return pick(rng, a, n) }
	var out []string
	for range 20 {
		sha := p(hexLo, 40)
		uuid := p(hexLo, 8) + "-" + p(hexLo, 4) + "-4" + p(hexLo, 3) + "-a" + p(hexLo, 3) + "-" + p(hexLo, 12)
		sum := base64.StdEncoding.EncodeToString([]byte(p(alnum, 32)))
		out = append(out,
			"commit "+sha+" built",
			"HEAD is now at "+sha[:7]+" fix lint",
			"merge "+sha+" into "+p(hexLo, 40),
			"request id "+uuid+" done",
			"trace_id="+uuid,
			"golang.org/x/text v0.44.0 h1:"+sum,
			"golang.org/x/text v0.44.0/go.mod h1:"+sum,
			"pulled image ghcr.io/acme/api@sha256:"+p(hexLo, 64),
			"sha512-"+base64.StdEncoding.EncodeToString([]byte(p(alnum, 64)))+" integrity ok",
			"digest: sha256:"+p(hexLo, 64)+" size: 1573",
		)
	}
	prose := []string{
		"The quick brown fox jumps over the lazy dog, again and again.",
		"Diagnostics travel from the child to the parent, safely.",
		"lint: line too long in handler.go",
	}
	for _, s := range prose {
		out = append(out, "payload "+base64.StdEncoding.EncodeToString([]byte(s))+" decoded")
	}
	out = append(out,
		"open /home/dev/go/pkg/mod/github.com/acme/lib@v1.2.3/key_test.go: no such file",
		"wrote /tmp/build-1234/token-cache/state.json",
		`C:\Users\dev\AppData\Local\Temp\auth\session.lock held`,
		"see https://github.com/acme/api/pull/1234#issuecomment-987654321",
		"GET https://api.example.com/v1/tokens?page=2&limit=50 200",
		"http://localhost:8080/api/keys/rotate returned 204",
		"postgres://db.internal:5432/app?sslmode=disable connected",
		"ssh://git@github.com:22/acme/api.git fetched",
		"git@github.com:acme/api.git: permission denied (publickey)",
		"redis://cache:6379/0 reconnecting",
		"lint: task build-api finished in 312ms; 4 files changed",
		"the access check passed; token cache warm; key order kept",
		"auth: using default credentials from the environment",
		"password must be at least 12 characters",
		"api: GET /v1/keys 200 in 35ms",
		"secret rotation scheduled for 2026-12-02T03:00:00Z",
		"missing API key: set OPENAI_API_KEY",
		"token expired at 2026-12-01T19:00:00Z, refreshing",
		"Authorization header missing",
		"Bearer token required",
		"key=value pairs: 3 parsed",
		"api_version=2024-06-01",
		"passwd: user dev changed",
		"credentials_id=prod-reader",
		"sk-ant-... (set your key here)",
		"export GITHUB_TOKEN=${GITHUB_TOKEN}",
		"token: ${{ secrets.GITHUB_TOKEN }}",
		"password: true",
		"secret = null",
		"jwt: header eyJhbGciOiJIUzI1NiJ9 malformed",
		"task ask disk risk: they said hey",
	)
	return out
}

// blns is the Big List of Naughty Strings from shared/corpora, if it is
// found above the package.
func blns(t *testing.T) []string {
	dir, err := filepath.Abs(".")
	if err != nil {
		return nil
	}
	for {
		p := filepath.Join(dir, "shared", "corpora", "blns", "blns.json")
		if data, err := os.ReadFile(p); err == nil {
			var list []string
			if err := json.Unmarshal(data, &list); err != nil {
				t.Fatal(err)
			}
			return list
		}
		up := filepath.Dir(dir)
		if up == dir {
			return nil
		}
		dir = up
	}
}

// quickRounds is how many fresh corpora TestQuality draws: 20 of the 30
// formats, and up to 5 generated findings per rule.
const quickRounds = 20

// rounds is quickRounds, or 2 under the race detector.
func rounds() int {
	if raceEnabled {
		return 2
	}
	return quickRounds
}

// TestQuality measures recall on the likely formats and on one generated
// finding per rule, and false positives on the clean corpus; it fails
// below the goal (every secret caught, no false positive). Run with -v for
// the figures (docs/redaction.md).
func TestQuality(t *testing.T) {
	rng := newRand(20)
	caught, total := 0, 0
	for round := range rounds() {
		for _, l := range likelyLeaks(rng) {
			total++
			out, counts := Message(l.text)
			ok := counts != nil
			for _, s := range l.secrets {
				if s != "" && strings.Contains(out, s) {
					ok = false
				}
			}
			if ok {
				caught++
			} else {
				t.Errorf("round %d, %s: %q -> %q %v", round, l.name, l.text, out, counts)
			}
		}
	}
	t.Logf("likely formats: %d of %d caught (30 formats x %d rounds)", caught, total, rounds())

	// One generated finding per rule (several tries each).
	global := compileAllow(gitleaksGlobal)
	specs := allSpecs()
	generated, ruleCaught := 0, 0
	var cannot []string
	for i := range specs {
		s := &specs[i]
		re, err := syntax.Parse(s.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		compiled := regexp.MustCompile(s.Regex)
		var allows []allow
		for _, a := range s.Allow {
			allows = append(allows, compileAllow(a))
		}
		found := 0
		for try := 0; try < 2000 && found < max(1, rounds()/4); try++ {
			var b strings.Builder
			genMatch(rng, re.Simplify(), &b)
			cand := b.String()
			if try%2 == 1 && len(s.Keywords) > 0 {
				cand = s.Keywords[0] + "=" + cand // give a keyword-less match its keyword
			}
			secret, ok := finding(s, compiled, allows, global, " "+cand+" ")
			if !ok {
				continue
			}
			found++
			generated++
			const pre, post = "check failed: ", " (retry 2)"
			text := pre + cand + post
			out, counts := Message(text)
			mid := strings.TrimSuffix(strings.TrimPrefix(out, strings.TrimSpace(pre)), post)
			if counts == nil || strings.Contains(mid, strings.TrimSpace(secret)) {
				t.Errorf("rule %s: generated %q (secret %q) -> %q %v", s.ID, text, secret, out, counts)
			} else {
				ruleCaught++
			}
		}
		if found == 0 {
			cannot = append(cannot, s.ID)
		}
	}
	t.Logf("generated: %d findings for %d of %d rules, %d caught; could not generate: %v", generated, len(specs)-len(cannot), len(specs), ruleCaught, cannot)
	if len(cannot) > 0 {
		t.Errorf("no finding generated for %d rules", len(cannot))
	}

	// False positives.
	clean := notSecrets(rng)
	list := blns(t)
	if list == nil {
		t.Log("shared/corpora/blns/blns.json not found above the package: BLNS skipped")
	}
	clean = append(clean, list...)
	fp := 0
	for _, s := range clean {
		if out, counts := Message(s); counts != nil {
			fp++
			t.Errorf("false positive: %q -> %q %v", s, out, counts)
		}
	}
	t.Logf("false positives: %d of %d clean texts (%d from BLNS)", fp, len(clean), len(list))
}
